package io.flexlink.nvshmem;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * NVSHMEM's host library in this process, opened once through the shim ({@link NvshmemNative}). Opening
 * never throws and never crashes the JVM: where the JNI library, {@code libnvshmem_host.so.3}, one of
 * its functions or a supported version is missing, {@link #open} returns the reason and every later
 * call returns the same one (a library cannot be reopened under another name in the same process).
 */
public final class NvshmemLibrary {
    private static final Logger LOG = LoggerFactory.getLogger(NvshmemLibrary.class);

    /** The NVSHMEM major version whose ABI (struct layouts, constants) the shim was written against. */
    public static final int SUPPORTED_MAJOR = 3;

    private static boolean tried;
    private static String reason;
    private static String openedAs;
    private static int version;
    private static volatile int signalSet;
    private static volatile int signalAdd;
    private static volatile int cmpGe;

    private NvshmemLibrary() {
    }

    /**
     * Opens {@code library} (a file name looked up on the loader's search path, or a path) if this
     * process has not opened NVSHMEM yet. Returns null when NVSHMEM is usable, else one line saying why not.
     */
    public static synchronized String open(String library) {
        if (tried) {
            if (reason == null && library != null && !library.equals(openedAs)) {
                LOG.debug("INIT nvshmem: {} requested, {} already open in this process", library, openedAs);
            }
            return reason;
        }
        tried = true;
        reason = load(library);
        if (reason == null) {
            openedAs = library;
            LOG.debug("INIT nvshmem: opened {} (NVSHMEM {})", library, versionText(version));
        } else {
            LOG.debug("INIT nvshmem: unavailable: {}", reason);
        }
        return reason;
    }

    private static String load(String library) {
        try {
            NvshmemNative.load();
        } catch (LinkageError | RuntimeException e) {
            return "the JNI shim of flexlink-native does not load here (" + e + ")";
        }
        try {
            int rc = NvshmemNative.flexlink_nvshmem_open(library == null ? "" : library);
            if (rc != 0) {
                return "cannot open NVSHMEM's host library " + library + ": " + NvshmemNative.flexlink_nvshmem_error();
            }
            version = NvshmemNative.flexlink_nvshmem_version();
            if (version / 10000 != SUPPORTED_MAJOR) {
                return "NVSHMEM " + versionText(version) + " in " + library + " is not supported (the shim"
                        + " follows the NVSHMEM " + SUPPORTED_MAJOR + ".x ABI)";
            }
            signalSet = NvshmemNative.flexlink_nvshmem_signal_set();
            signalAdd = NvshmemNative.flexlink_nvshmem_signal_add();
            cmpGe = NvshmemNative.flexlink_nvshmem_cmp_ge();
            return null;
        } catch (LinkageError | RuntimeException e) {
            return "the NVSHMEM shim failed: " + e;
        }
    }

    /** True once {@link #open} succeeded. */
    public static synchronized boolean isOpen() {
        return tried && reason == null;
    }

    /** {@code major * 10000 + minor * 100 + patch} of the open library; 0 when none is open. */
    public static synchronized int version() {
        return isOpen() ? version : 0;
    }

    static String versionText(int v) {
        return v < 0 ? "?" : (v / 10000) + "." + (v / 100 % 100) + "." + (v % 100);
    }

    /** NVSHMEM_SIGNAL_SET, as the shim's header has it. */
    static int signalSet() {
        return signalSet;
    }

    /** NVSHMEM_SIGNAL_ADD, as the shim's header has it. */
    static int signalAdd() {
        return signalAdd;
    }

    /** NVSHMEM_CMP_GE, as the shim's header has it. */
    static int cmpGe() {
        return cmpGe;
    }

    /** The shim's last error text. */
    static String lastError() {
        return NvshmemNative.flexlink_nvshmem_error();
    }
}
