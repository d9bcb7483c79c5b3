/*
 * NUMA placement of pinned staging memory: mbind(2) through the system call, so that no libnuma is
 * needed at build or run time. Binding must happen before the memory is pinned (cudaHostRegister):
 * pinned pages cannot move.
 */
#ifndef FLEXLINK_NUMA_H
#define FLEXLINK_NUMA_H

#include <errno.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

/** Binds [addr, addr + len) to NUMA node {@code node} (MPOL_BIND), moving pages already there; 0 or errno. */
static inline int flexlink_numa_bind(long long addr, long long len, int node) {
    unsigned long mask[16] = {0};
    const int bits = (int) (8 * sizeof(unsigned long));
    if (node < 0 || node >= 16 * bits || len <= 0) {
        return EINVAL;
    }
    mask[node / bits] = 1UL << (node % bits);
    /* MPOL_BIND = 2, MPOL_MF_MOVE = 1 << 1 */
    long rc = syscall(SYS_mbind, (void *) (intptr_t) addr, (unsigned long) len, 2, mask,
                      (unsigned long) (16 * bits), 1 << 1);
    return rc == 0 ? 0 : errno;
}

#endif
