/*
 * flexlink_nvshmem.h: FlexLink's shim over NVSHMEM's host library, compiled into the JNI library of
 * io.flexlink.nvshmem.NvshmemNative by the javacpp Maven plugin (gcc/g++ only: no CUDA or NVSHMEM
 * headers are needed to build it).
 *
 * libnvshmem_host.so.3 is opened at run time with dlopen and every function is looked up with dlsym,
 * so the JNI library loads everywhere and a missing NVSHMEM is an error code, never a crash.
 * CUDA streams and device pointers travel as 64-bit integers (cudaStream_t and void * here).
 *
 * Layouts and constants below are those of the public NVSHMEM headers of release 3.4.5
 * (github.com/NVIDIA/nvshmem, tag v3.4.5-0; unchanged in 3.5.1):
 *   src/include/bootstrap_device_host/nvshmem_uniqueid.h  nvshmemx_uniqueid_v1 (128 B),
 *                                                         nvshmemx_uniqueid_args_v1 (24 B)
 *   src/include/device_host/nvshmem_types.h               nvshmemx_init_args_v1 (128 B),
 *                                                         nvshmemx_init_attr_v1 (144 B),
 *                                                         version words "(1 << 16) + sizeof(...)"
 *   src/include/host/nvshmemx_api.h                       NVSHMEMX_INIT_WITH_UNIQUEID = 1 << 3
 *   src/include/device_host_transport/nvshmem_common_transport.h
 *                                                         NVSHMEM_SIGNAL_SET = 9, NVSHMEM_SIGNAL_ADD = 10
 *   src/include/device_host_transport/nvshmem_constants.h NVSHMEM_CMP_GE = 5,
 *                                                         NVSHMEM_STATUS_IS_INITIALIZED = 2
 *
 * Initialization: the header's nvshmemx_init_attr() is a static inline that calls
 * nvshmemi_init_thread, which lives in the static device library (libnvshmem_device.a), not in
 * libnvshmem_host.so.3. A process without NVSHMEM device code therefore initializes through the
 * exported nvshmemx_hostlib_init_attr(flags, attr) with the same flags and attributes, as NVIDIA's
 * own Python binding (nvshmem4py) does; nvshmemx_hostlib_finalize() is its counterpart.
 */
#ifndef FLEXLINK_NVSHMEM_H
#define FLEXLINK_NVSHMEM_H

#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* ---- NVSHMEM 3.x ABI (see the header comment for the source of every value) ---- */

typedef struct {
    int version;
    char internal[124];
} flexlink_nvshmemx_uniqueid_t;

typedef struct {
    int version;
    flexlink_nvshmemx_uniqueid_t *id;
    int myrank;
    int nranks;
} flexlink_nvshmemx_uniqueid_args_t;

typedef struct {
    int version;
    flexlink_nvshmemx_uniqueid_args_t uid_args;
    char content[96];
} flexlink_nvshmemx_init_args_t;

typedef struct {
    int version;
    void *mpi_comm;
    flexlink_nvshmemx_init_args_t args;
} flexlink_nvshmemx_init_attr_t;

static_assert(sizeof(flexlink_nvshmemx_uniqueid_t) == 128, "nvshmemx_uniqueid_v1 is 128 bytes");
static_assert(sizeof(flexlink_nvshmemx_uniqueid_args_t) == 24, "nvshmemx_uniqueid_args_v1 is 24 bytes");
static_assert(sizeof(flexlink_nvshmemx_init_args_t) == 128, "nvshmemx_init_args_v1 is 128 bytes");
static_assert(sizeof(flexlink_nvshmemx_init_attr_t) == 144, "nvshmemx_init_attr_v1 is 144 bytes");

#define FLEXLINK_NVSHMEM_VERSION_WORD(type) ((1 << 16) + (int) sizeof(type))
#define FLEXLINK_NVSHMEMX_INIT_WITH_UNIQUEID (1 << 3)
#define FLEXLINK_NVSHMEM_SIGNAL_SET 9
#define FLEXLINK_NVSHMEM_SIGNAL_ADD 10
#define FLEXLINK_NVSHMEM_CMP_GE 5
#define FLEXLINK_NVSHMEM_STATUS_IS_INITIALIZED 2
#define FLEXLINK_NVSHMEM_DEFAULT_LIBRARY "libnvshmem_host.so.3"

/* ---- the functions, looked up once ---- */

typedef struct {
    void (*vendor_get_version_info)(int *, int *, int *);
    int (*get_uniqueid)(flexlink_nvshmemx_uniqueid_t *);
    int (*set_attr_uniqueid_args)(int, int, const flexlink_nvshmemx_uniqueid_t *, flexlink_nvshmemx_init_attr_t *);
    int (*hostlib_init_attr)(unsigned int, flexlink_nvshmemx_init_attr_t *);
    void (*hostlib_finalize)(void);
    int (*init_status)(void);
    int (*my_pe)(void);
    int (*n_pes)(void);
    void *(*malloc_)(size_t);
    void (*free_)(void *);
    void (*putmem_signal_on_stream)(void *, const void *, size_t, uint64_t *, uint64_t, int, int, void *);
    void (*signal_op_on_stream)(uint64_t *, uint64_t, int, int, void *);
    void (*signal_wait_until_on_stream)(uint64_t *, int, uint64_t, void *);
    void (*quiet_on_stream)(void *);
    void (*barrier_all_on_stream)(void *);
} flexlink_nvshmem_functions;

static flexlink_nvshmem_functions flexlink_nvshmem_fn;
static void *flexlink_nvshmem_handle = NULL;
static char flexlink_nvshmem_message[1024] = "";

static inline void flexlink_nvshmem_set_message(const char *what, const char *detail) {
    snprintf(flexlink_nvshmem_message, sizeof(flexlink_nvshmem_message), "%s%s%s", what,
             detail != NULL ? ": " : "", detail != NULL ? detail : "");
}

/** The last error of this shim: a dlopen/dlsym message or the call that failed; "" when none. */
static inline const char *flexlink_nvshmem_error() {
    return flexlink_nvshmem_message;
}

/** 1 when the library is open and every function was found. */
static inline int flexlink_nvshmem_loaded() {
    return flexlink_nvshmem_handle != NULL;
}

#define FLEXLINK_NVSHMEM_SYM(field, name)                                                \
    do {                                                                                 \
        *(void **) (&fn.field) = dlsym(h, name);                                         \
        if (fn.field == NULL) {                                                          \
            const char *e = dlerror();                                                   \
            flexlink_nvshmem_set_message("dlsym(" name ") failed", e);                   \
            dlclose(h); /* after copying dlerror's text, which dlclose may free */       \
            return -2;                                                                   \
        }                                                                                \
    } while (0)

/**
 * Opens NVSHMEM's host library: {@code path} ("" or NULL: libnvshmem_host.so.3 on the loader's search
 * path) with RTLD_NOW | RTLD_GLOBAL, as nvshmem4py does (NVSHMEM's bootstrap and transport plugins are
 * opened by name later). Returns 0, -1 when dlopen fails, -2 when a function is missing (the library is
 * closed again). A library that is open stays open (a process never unloads NVSHMEM); calling this again
 * returns 0.
 */
static inline int flexlink_nvshmem_open(const char *path) {
    if (flexlink_nvshmem_handle != NULL) {
        return 0;
    }
    const char *name = path != NULL && path[0] != '\0' ? path : FLEXLINK_NVSHMEM_DEFAULT_LIBRARY;
    dlerror();
    void *h = dlopen(name, RTLD_NOW | RTLD_GLOBAL);
    if (h == NULL) {
        const char *e = dlerror();
        flexlink_nvshmem_set_message("dlopen failed", e != NULL ? e : name);
        return -1;
    }
    flexlink_nvshmem_functions fn;
    memset(&fn, 0, sizeof(fn));
    FLEXLINK_NVSHMEM_SYM(vendor_get_version_info, "nvshmemx_vendor_get_version_info");
    FLEXLINK_NVSHMEM_SYM(get_uniqueid, "nvshmemx_get_uniqueid");
    FLEXLINK_NVSHMEM_SYM(set_attr_uniqueid_args, "nvshmemx_set_attr_uniqueid_args");
    FLEXLINK_NVSHMEM_SYM(hostlib_init_attr, "nvshmemx_hostlib_init_attr");
    FLEXLINK_NVSHMEM_SYM(hostlib_finalize, "nvshmemx_hostlib_finalize");
    FLEXLINK_NVSHMEM_SYM(init_status, "nvshmemx_init_status");
    FLEXLINK_NVSHMEM_SYM(my_pe, "nvshmem_my_pe");
    FLEXLINK_NVSHMEM_SYM(n_pes, "nvshmem_n_pes");
    FLEXLINK_NVSHMEM_SYM(malloc_, "nvshmem_malloc");
    FLEXLINK_NVSHMEM_SYM(free_, "nvshmem_free");
    FLEXLINK_NVSHMEM_SYM(putmem_signal_on_stream, "nvshmemx_putmem_signal_on_stream");
    FLEXLINK_NVSHMEM_SYM(signal_op_on_stream, "nvshmemx_signal_op_on_stream");
    FLEXLINK_NVSHMEM_SYM(signal_wait_until_on_stream, "nvshmemx_signal_wait_until_on_stream");
    FLEXLINK_NVSHMEM_SYM(quiet_on_stream, "nvshmemx_quiet_on_stream");
    FLEXLINK_NVSHMEM_SYM(barrier_all_on_stream, "nvshmemx_barrier_all_on_stream");
    flexlink_nvshmem_fn = fn;
    flexlink_nvshmem_handle = h;
    flexlink_nvshmem_message[0] = '\0';
    return 0;
}

#undef FLEXLINK_NVSHMEM_SYM

/** major * 10000 + minor * 100 + patch of the library (nvshmemx_vendor_get_version_info); -1 when not open. */
static inline int flexlink_nvshmem_version() {
    if (!flexlink_nvshmem_loaded()) {
        return -1;
    }
    int major = 0, minor = 0, patch = 0;
    flexlink_nvshmem_fn.vendor_get_version_info(&major, &minor, &patch);
    return major * 10000 + minor * 100 + patch;
}

/** Bytes of nvshmemx_uniqueid_t. */
static inline int flexlink_nvshmem_uniqueid_bytes() {
    return (int) sizeof(flexlink_nvshmemx_uniqueid_t);
}

/** Fills {@code out} (128 bytes) with a new unique id (nvshmemx_get_uniqueid); 0 or NVSHMEM's error code. */
static inline int flexlink_nvshmem_get_uniqueid(signed char *out) {
    if (!flexlink_nvshmem_loaded()) {
        flexlink_nvshmem_set_message("NVSHMEM is not open", NULL);
        return -1;
    }
    flexlink_nvshmemx_uniqueid_t id;
    memset(&id, 0, sizeof(id));
    id.version = FLEXLINK_NVSHMEM_VERSION_WORD(flexlink_nvshmemx_uniqueid_t); /* NVSHMEMX_UNIQUEID_INITIALIZER */
    int rc = flexlink_nvshmem_fn.get_uniqueid(&id);
    if (rc != 0) {
        flexlink_nvshmem_set_message("nvshmemx_get_uniqueid failed", NULL);
        return rc;
    }
    memcpy(out, &id, sizeof(id));
    return 0;
}

/**
 * Initializes this process as PE {@code rank} of {@code nranks} from the unique id that rank 0 made
 * (nvshmemx_set_attr_uniqueid_args + nvshmemx_hostlib_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID)), on the
 * calling thread's current CUDA device. Returns 0 when NVSHMEM reports itself initialized, else NVSHMEM's
 * error code or -3 when it only bootstrapped (its device setup failed).
 */
static inline int flexlink_nvshmem_init(const signed char *uid, int rank, int nranks) {
    if (!flexlink_nvshmem_loaded()) {
        flexlink_nvshmem_set_message("NVSHMEM is not open", NULL);
        return -1;
    }
    flexlink_nvshmemx_uniqueid_t id;
    memcpy(&id, uid, sizeof(id));
    flexlink_nvshmemx_init_attr_t attr;
    memset(&attr, 0, sizeof(attr));
    /* NVSHMEMX_INIT_ATTR_V1_INITIALIZER / nvshmemx_init_init_attr_ver_only */
    attr.version = FLEXLINK_NVSHMEM_VERSION_WORD(flexlink_nvshmemx_init_attr_t);
    attr.mpi_comm = NULL;
    attr.args.version = FLEXLINK_NVSHMEM_VERSION_WORD(flexlink_nvshmemx_init_args_t);
    attr.args.uid_args.version = FLEXLINK_NVSHMEM_VERSION_WORD(flexlink_nvshmemx_uniqueid_args_t);
    attr.args.uid_args.id = NULL;
    attr.args.uid_args.myrank = -1;
    attr.args.uid_args.nranks = -1;
    int rc = flexlink_nvshmem_fn.set_attr_uniqueid_args(rank, nranks, &id, &attr);
    if (rc != 0) {
        flexlink_nvshmem_set_message("nvshmemx_set_attr_uniqueid_args failed", NULL);
        return rc;
    }
    rc = flexlink_nvshmem_fn.hostlib_init_attr(FLEXLINK_NVSHMEMX_INIT_WITH_UNIQUEID, &attr);
    if (rc != 0) {
        flexlink_nvshmem_set_message("nvshmemx_hostlib_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID) failed"
                                     " (NVSHMEM_DEBUG=INFO tells why)", NULL);
        return rc;
    }
    int status = flexlink_nvshmem_fn.init_status();
    if (status < FLEXLINK_NVSHMEM_STATUS_IS_INITIALIZED) {
        char detail[64];
        snprintf(detail, sizeof(detail), "nvshmemx_init_status() = %d", status);
        flexlink_nvshmem_set_message("NVSHMEM bootstrapped but did not initialize its device state"
                                     " (NVSHMEM_DEBUG=INFO tells why)", detail);
        return -3;
    }
    return 0;
}

/** nvshmemx_init_status(); -1 when not open. */
static inline int flexlink_nvshmem_init_status() {
    return flexlink_nvshmem_loaded() ? flexlink_nvshmem_fn.init_status() : -1;
}

static inline int flexlink_nvshmem_my_pe() {
    return flexlink_nvshmem_loaded() ? flexlink_nvshmem_fn.my_pe() : -1;
}

static inline int flexlink_nvshmem_n_pes() {
    return flexlink_nvshmem_loaded() ? flexlink_nvshmem_fn.n_pes() : -1;
}

/** nvshmem_malloc (collective: every PE, same size, same order); the address, or 0. */
static inline long long flexlink_nvshmem_malloc(long long bytes) {
    if (!flexlink_nvshmem_loaded() || bytes <= 0) {
        return 0;
    }
    return (long long) (intptr_t) flexlink_nvshmem_fn.malloc_((size_t) bytes);
}

/** nvshmem_free (collective). */
static inline void flexlink_nvshmem_free(long long address) {
    if (flexlink_nvshmem_loaded() && address != 0) {
        flexlink_nvshmem_fn.free_((void *) (intptr_t) address);
    }
}

/** nvshmemx_putmem_signal_on_stream: {@code bytes} from local {@code src} to symmetric {@code dst} on {@code pe}, then the signal. */
static inline void flexlink_nvshmem_putmem_signal_on_stream(long long dst, long long src, long long bytes,
                                                            long long signal, long long value, int op, int pe,
                                                            long long stream) {
    if (!flexlink_nvshmem_loaded()) {
        return;
    }
    flexlink_nvshmem_fn.putmem_signal_on_stream((void *) (intptr_t) dst, (const void *) (intptr_t) src,
                                                (size_t) bytes, (uint64_t *) (intptr_t) signal, (uint64_t) value,
                                                op, pe, (void *) (intptr_t) stream);
}

/** nvshmemx_signal_op_on_stream: updates symmetric signal {@code signal} on {@code pe}. */
static inline void flexlink_nvshmem_signal_op_on_stream(long long signal, long long value, int op, int pe,
                                                        long long stream) {
    if (!flexlink_nvshmem_loaded()) {
        return;
    }
    flexlink_nvshmem_fn.signal_op_on_stream((uint64_t *) (intptr_t) signal, (uint64_t) value, op, pe,
                                            (void *) (intptr_t) stream);
}

/** nvshmemx_signal_wait_until_on_stream: later work of the stream waits until the local signal compares true. */
static inline void flexlink_nvshmem_signal_wait_until_on_stream(long long signal, int cmp, long long value,
                                                                long long stream) {
    if (!flexlink_nvshmem_loaded()) {
        return;
    }
    flexlink_nvshmem_fn.signal_wait_until_on_stream((uint64_t *) (intptr_t) signal, cmp, (uint64_t) value,
                                                    (void *) (intptr_t) stream);
}

static inline void flexlink_nvshmem_quiet_on_stream(long long stream) {
    if (!flexlink_nvshmem_loaded()) {
        return;
    }
    flexlink_nvshmem_fn.quiet_on_stream((void *) (intptr_t) stream);
}

static inline void flexlink_nvshmem_barrier_all_on_stream(long long stream) {
    if (!flexlink_nvshmem_loaded()) {
        return;
    }
    flexlink_nvshmem_fn.barrier_all_on_stream((void *) (intptr_t) stream);
}

/** nvshmemx_hostlib_finalize (collective); the library stays open. */
static inline void flexlink_nvshmem_finalize() {
    if (flexlink_nvshmem_loaded()) {
        flexlink_nvshmem_fn.hostlib_finalize();
    }
}

static inline int flexlink_nvshmem_signal_set() {
    return FLEXLINK_NVSHMEM_SIGNAL_SET;
}

static inline int flexlink_nvshmem_signal_add() {
    return FLEXLINK_NVSHMEM_SIGNAL_ADD;
}

static inline int flexlink_nvshmem_cmp_ge() {
    return FLEXLINK_NVSHMEM_CMP_GE;
}

#endif /* FLEXLINK_NVSHMEM_H */
