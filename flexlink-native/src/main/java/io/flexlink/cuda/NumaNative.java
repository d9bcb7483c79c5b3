package io.flexlink.cuda;

import org.bytedeco.javacpp.Loader;
import org.bytedeco.javacpp.annotation.Platform;

/** The {@code mbind} system call, compiled by the javacpp plugin from {@code flexlink_numa.h} (no libnuma needed). */
@Platform(include = "flexlink_numa.h")
final class NumaNative {
    static {
        Loader.load();
    }

    private NumaNative() {
    }

    /** Binds {@code [addr, addr + len)} to NUMA node {@code node}, moving pages already allocated; 0 or errno. */
    static native int flexlink_numa_bind(long addr, long len, int node);
}
