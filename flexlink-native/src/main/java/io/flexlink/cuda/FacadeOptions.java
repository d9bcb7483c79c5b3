package io.flexlink.cuda;

import static io.flexlink.runtime.NativeMemory.UNSAFE;

import io.flexlink.FlexLinkException;
import java.nio.charset.StandardCharsets;

/**
 * What the facade takes from an {@code ncclConfig_t} ({@code ncclCommInitRankConfig}): {@code blocking} and
 * {@code commName} for itself, and the fields that tune NCCL ({@link NcclTuning}) for the NCCL communicator of
 * the primary path; {@code splitShare} and {@code shrinkShare} are checked and have no effect, as FlexLink's
 * children never share their parent's resources (docs/migration.md). The struct is read from its address with the
 * layout of the NCCL 2.30 headers bytedeco was built from (not through its JNI accessors, so that the
 * checks run where NCCL's library is absent), and like NCCL only the fields its {@code size} covers: a
 * program built against older headers passes a shorter struct, whose missing fields stay NCCL_CONFIG_UNDEF_INT.
 * The checks are NCCL's: a field is NCCL_CONFIG_UNDEF_INT (NULL for pointers) or in its range; CTAPolicy,
 * trafficClass and netName are not checked.
 *
 * @param blocking false: creation runs in the background and calls answer ncclInProgress until it is done
 * @param commName the name in the communicator's log lines, or null
 * @param tuning what the primary's NCCL communicator is created with
 */
record FacadeOptions(boolean blocking, String commName, NcclTuning tuning) {
    static final FacadeOptions DEFAULT = new FacadeOptions(true, null);

    /** Options of NCCL's tuning left to NCCL: a split's, shrink's or grow's child, which has its parent's. */
    FacadeOptions(boolean blocking, String commName) {
        this(blocking, commName, NcclTuning.DEFAULT);
    }

    /** NCCL_CONFIG_INITIALIZER's magic. */
    static final int MAGIC = 0xcafebeef;
    /** NCCL_CONFIG_UNDEF_INT: a field left to NCCL's default. */
    static final int UNDEF = Integer.MIN_VALUE;
    /** sizeof(ncclConfig_t) in NCCL 2.30 (x86-64 and aarch64 alike): 2.29's 88 bytes and two ints. */
    static final int BYTES = 96;
    /** The longest commName taken (NCCL copies the string; so does the facade). */
    static final int MAX_NAME_BYTES = 1024;

    // offsets in ncclConfig_t
    static final int SIZE = 0;
    static final int MAGIC_AT = 8;
    static final int VERSION = 12;
    static final int BLOCKING = 16;
    static final int CGA_CLUSTER_SIZE = 20;
    static final int MIN_CTAS = 24;
    static final int MAX_CTAS = 28;
    static final int NET_NAME = 32;
    static final int SPLIT_SHARE = 40;
    static final int TRAFFIC_CLASS = 44;
    static final int COMM_NAME = 48;
    static final int COLLNET_ENABLE = 56;
    static final int CTA_POLICY = 60;
    static final int SHRINK_SHARE = 64;
    static final int NVLS_CTAS = 68;
    static final int N_CHANNELS_PER_NET_PEER = 72;
    static final int NVLINK_CENTRIC_SCHED = 76;
    static final int GRAPH_USAGE_MODE = 80;
    static final int NUM_RMA_CTX = 84;
    static final int MAX_P2P_PEERS = 88;
    static final int GRAPH_STREAM_ORDERING = 92;

    /**
     * The options of a split's or shrink's child: NCCL's NULL config keeps the parent's blocking and commName,
     * any other config is read (and checked) like ncclCommInitRankConfig's.
     */
    static FacadeOptions child(NcclFacade.FacadeComm parent, org.bytedeco.javacpp.Pointer config) {
        return config == null || config.address() == 0 ? new FacadeOptions(parent.blocking, parent.name)
                : read(config.address() + config.position() * BYTES);
    }

    /** The options of the config at {@code address} (0: NCCL's NULL config, the defaults). */
    static FacadeOptions read(long address) {
        if (address == 0) {
            return DEFAULT;
        }
        // a larger size is a struct of later headers, whose extra fields are unknown here (NCCL does the same)
        long size = Math.min(UNSAFE.getLong(address + SIZE), BYTES);
        int magic = UNSAFE.getInt(address + MAGIC_AT);
        int version = UNSAFE.getInt(address + VERSION);
        if (magic != MAGIC) {
            throw invalid("magic: 0x" + Integer.toHexString(magic) + ", not 0xcafebeef (initialize every field as "
                    + "NCCL_CONFIG_INITIALIZER does: size, magic, version, the others NCCL_CONFIG_UNDEF_INT or NULL)");
        }
        // fields newer than the headers the program was built with are NCCL's defaults, as NCCL reads them
        size = Math.min(size, version < 22700 ? COLLNET_ENABLE : version < 22800 ? N_CHANNELS_PER_NET_PEER
                : version < 22900 ? GRAPH_USAGE_MODE : version < 23000 ? MAX_P2P_PEERS : BYTES);
        int blocking = field(address, size, BLOCKING);
        if (blocking != UNDEF && blocking != 0 && blocking != 1) {
            throw invalid("blocking: " + blocking + " (0, 1 or NCCL_CONFIG_UNDEF_INT)");
        }
        zeroOrOne(address, size, SPLIT_SHARE, "splitShare");
        zeroOrOne(address, size, SHRINK_SHARE, "shrinkShare");
        String net = size >= NET_NAME + 8 ? string(UNSAFE.getLong(address + NET_NAME), "netName") : null;
        NcclTuning tuning = new NcclTuning(field(address, size, CGA_CLUSTER_SIZE), field(address, size, MIN_CTAS),
                field(address, size, MAX_CTAS), net, field(address, size, TRAFFIC_CLASS),
                field(address, size, COLLNET_ENABLE), field(address, size, CTA_POLICY), field(address, size, NVLS_CTAS),
                field(address, size, N_CHANNELS_PER_NET_PEER), field(address, size, NVLINK_CENTRIC_SCHED),
                field(address, size, GRAPH_USAGE_MODE), field(address, size, NUM_RMA_CTX),
                field(address, size, MAX_P2P_PEERS), field(address, size, GRAPH_STREAM_ORDERING));
        String name = size >= COMM_NAME + 8 ? string(UNSAFE.getLong(address + COMM_NAME), "commName") : null;
        return new FacadeOptions(blocking != 0, name, tuning);
    }

    /** A field the struct's size covers, else NCCL's "undefined". */
    private static int field(long address, long size, int offset) {
        return size >= offset + 4 ? UNSAFE.getInt(address + offset) : UNDEF;
    }

    private static void zeroOrOne(long address, long size, int offset, String name) {
        int v = field(address, size, offset);
        if (v != UNDEF && v != 0 && v != 1) {
            throw invalid(name + ": " + v + " (0, 1 or NCCL_CONFIG_UNDEF_INT)");
        }
    }

    /** A NUL-terminated UTF-8 string at {@code p} (0: null), at most {@link #MAX_NAME_BYTES} bytes. */
    private static String string(long p, String name) {
        if (p == 0) {
            return null;
        }
        byte[] b = new byte[MAX_NAME_BYTES];
        for (int i = 0; i < MAX_NAME_BYTES; i++) {
            b[i] = UNSAFE.getByte(p + i);
            if (b[i] == 0) {
                return new String(b, 0, i, StandardCharsets.UTF_8);
            }
        }
        throw invalid(name + ": no terminating NUL within " + MAX_NAME_BYTES + " bytes");
    }

    private static FlexLinkException invalid(String why) {
        return NcclTuning.invalid(why);
    }
}
