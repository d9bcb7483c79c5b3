package io.flexlink.cuda;

import static io.flexlink.runtime.NativeMemory.UNSAFE;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;

/**
 * The fields of NCCL's {@code ncclConfig_t} that tune NCCL itself, for the NCCL communicators of FlexLink's
 * primary path: the facade reads them from the program's config ({@code ncclCommInitRankConfig}); a user of the
 * core API on the CUDA backend gives them through {@link CudaBackend#tuned(NcclTuning)}. {@link #UNDEF} (NULL for
 * {@code netName}) leaves a field to NCCL (its environment variable, then its own choice), as
 * NCCL_CONFIG_UNDEF_INT does; {@link #DEFAULT} leaves every one. The checks are NCCL's, made once, here:
 * a field is UNDEF or in its range; CTAPolicy, trafficClass and netName are left to NCCL, which judges them (a
 * CTAPolicy it does not know, say) when it creates the primary.
 * {@code blocking}, {@code commName}, {@code splitShare} and {@code shrinkShare} are not here: FlexLink's
 * primary is always created blocking (its calls would otherwise answer ncclInProgress, which FlexLink does not
 * poll for), and is never split or shrunk by NCCL (docs/migration.md).
 *
 * @param ctaPolicy NCCL's {@code CTAPolicy}
 */
public record NcclTuning(int cgaClusterSize, int minCTAs, int maxCTAs, String netName, int trafficClass,
                         int collnetEnable, int ctaPolicy, int nvlsCTAs, int nChannelsPerNetPeer,
                         int nvlinkCentricSched, int graphUsageMode, int numRmaCtx, int maxP2pPeers,
                         int graphStreamOrdering) {
    /** NCCL_CONFIG_UNDEF_INT: the field is NCCL's to choose. */
    public static final int UNDEF = Integer.MIN_VALUE;
    /** Every field NCCL's to choose: what {@code ncclCommInitRank} gets. */
    public static final NcclTuning DEFAULT = new NcclTuning(UNDEF, UNDEF, UNDEF, null, UNDEF, UNDEF, UNDEF, UNDEF,
            UNDEF, UNDEF, UNDEF, UNDEF, UNDEF, UNDEF);

    /** Checks each field as NCCL's ncclCommInitRankConfig does; INVALID_ARGUMENT names the first bad one. */
    public NcclTuning {
        if (cgaClusterSize != UNDEF && cgaClusterSize < 0) {
            throw invalid("cgaClusterSize: " + cgaClusterSize + " (not negative)");
        }
        positive(minCTAs, "minCTAs");
        positive(maxCTAs, "maxCTAs");
        if (minCTAs != UNDEF && maxCTAs != UNDEF && minCTAs > maxCTAs) {
            throw invalid("minCTAs: " + minCTAs + " is more than maxCTAs " + maxCTAs);
        }
        zeroOrOne(collnetEnable, "collnetEnable");
        zeroOrOne(nvlinkCentricSched, "nvlinkCentricSched");
        zeroOrOne(graphStreamOrdering, "graphStreamOrdering");
        positive(nvlsCTAs, "nvlsCTAs");
        positive(nChannelsPerNetPeer, "nChannelsPerNetPeer");
        positive(numRmaCtx, "numRmaCtx");
        if (graphUsageMode != UNDEF && (graphUsageMode < 0 || graphUsageMode > 2)) {
            throw invalid("graphUsageMode: " + graphUsageMode + " (0, 1, 2 or NCCL_CONFIG_UNDEF_INT)");
        }
        if (netName != null && netName.indexOf('\0') >= 0) {
            throw invalid("netName: contains a NUL character");
        }
    }

    public NcclTuning cgaClusterSize(int v) {
        return new NcclTuning(v, minCTAs, maxCTAs, netName, trafficClass, collnetEnable, ctaPolicy, nvlsCTAs,
                nChannelsPerNetPeer, nvlinkCentricSched, graphUsageMode, numRmaCtx, maxP2pPeers, graphStreamOrdering);
    }

    public NcclTuning minCTAs(int v) {
        return new NcclTuning(cgaClusterSize, v, maxCTAs, netName, trafficClass, collnetEnable, ctaPolicy, nvlsCTAs,
                nChannelsPerNetPeer, nvlinkCentricSched, graphUsageMode, numRmaCtx, maxP2pPeers, graphStreamOrdering);
    }

    public NcclTuning maxCTAs(int v) {
        return new NcclTuning(cgaClusterSize, minCTAs, v, netName, trafficClass, collnetEnable, ctaPolicy, nvlsCTAs,
                nChannelsPerNetPeer, nvlinkCentricSched, graphUsageMode, numRmaCtx, maxP2pPeers, graphStreamOrdering);
    }

    /** NCCL's network module by name (null: NCCL's choice). */
    public NcclTuning netName(String v) {
        return new NcclTuning(cgaClusterSize, minCTAs, maxCTAs, v, trafficClass, collnetEnable, ctaPolicy, nvlsCTAs,
                nChannelsPerNetPeer, nvlinkCentricSched, graphUsageMode, numRmaCtx, maxP2pPeers, graphStreamOrdering);
    }

    public NcclTuning trafficClass(int v) {
        return new NcclTuning(cgaClusterSize, minCTAs, maxCTAs, netName, v, collnetEnable, ctaPolicy, nvlsCTAs,
                nChannelsPerNetPeer, nvlinkCentricSched, graphUsageMode, numRmaCtx, maxP2pPeers, graphStreamOrdering);
    }

    public NcclTuning collnetEnable(int v) {
        return new NcclTuning(cgaClusterSize, minCTAs, maxCTAs, netName, trafficClass, v, ctaPolicy, nvlsCTAs,
                nChannelsPerNetPeer, nvlinkCentricSched, graphUsageMode, numRmaCtx, maxP2pPeers, graphStreamOrdering);
    }

    public NcclTuning ctaPolicy(int v) {
        return new NcclTuning(cgaClusterSize, minCTAs, maxCTAs, netName, trafficClass, collnetEnable, v, nvlsCTAs,
                nChannelsPerNetPeer, nvlinkCentricSched, graphUsageMode, numRmaCtx, maxP2pPeers, graphStreamOrdering);
    }

    public NcclTuning nvlsCTAs(int v) {
        return new NcclTuning(cgaClusterSize, minCTAs, maxCTAs, netName, trafficClass, collnetEnable, ctaPolicy, v,
                nChannelsPerNetPeer, nvlinkCentricSched, graphUsageMode, numRmaCtx, maxP2pPeers, graphStreamOrdering);
    }

    public NcclTuning nChannelsPerNetPeer(int v) {
        return new NcclTuning(cgaClusterSize, minCTAs, maxCTAs, netName, trafficClass, collnetEnable, ctaPolicy,
                nvlsCTAs, v, nvlinkCentricSched, graphUsageMode, numRmaCtx, maxP2pPeers, graphStreamOrdering);
    }

    public NcclTuning nvlinkCentricSched(int v) {
        return new NcclTuning(cgaClusterSize, minCTAs, maxCTAs, netName, trafficClass, collnetEnable, ctaPolicy,
                nvlsCTAs, nChannelsPerNetPeer, v, graphUsageMode, numRmaCtx, maxP2pPeers, graphStreamOrdering);
    }

    public NcclTuning graphUsageMode(int v) {
        return new NcclTuning(cgaClusterSize, minCTAs, maxCTAs, netName, trafficClass, collnetEnable, ctaPolicy,
                nvlsCTAs, nChannelsPerNetPeer, nvlinkCentricSched, v, numRmaCtx, maxP2pPeers, graphStreamOrdering);
    }

    public NcclTuning numRmaCtx(int v) {
        return new NcclTuning(cgaClusterSize, minCTAs, maxCTAs, netName, trafficClass, collnetEnable, ctaPolicy,
                nvlsCTAs, nChannelsPerNetPeer, nvlinkCentricSched, graphUsageMode, v, maxP2pPeers, graphStreamOrdering);
    }

    /** NCCL 2.30's: below 1 or above the ranks is the ranks, as NCCL (not checked; an older NCCL ignores it). */
    public NcclTuning maxP2pPeers(int v) {
        return new NcclTuning(cgaClusterSize, minCTAs, maxCTAs, netName, trafficClass, collnetEnable, ctaPolicy,
                nvlsCTAs, nChannelsPerNetPeer, nvlinkCentricSched, graphUsageMode, numRmaCtx, v, graphStreamOrdering);
    }

    /** NCCL 2.30's: 0, 1 or UNDEF (an older NCCL ignores it). */
    public NcclTuning graphStreamOrdering(int v) {
        return new NcclTuning(cgaClusterSize, minCTAs, maxCTAs, netName, trafficClass, collnetEnable, ctaPolicy,
                nvlsCTAs, nChannelsPerNetPeer, nvlinkCentricSched, graphUsageMode, numRmaCtx, maxP2pPeers, v);
    }

    /**
     * Writes the {@code ncclConfig_t} of a primary communicator at {@code address} ({@link FacadeOptions#BYTES}
     * bytes, NCCL 2.30's struct: an older NCCL reads the fields it knows, as it does of any newer program's config),
     * as NCCL_CONFIG_INITIALIZER of the headers FlexLink was built with, then these fields: size, magic,
     * version, {@code blocking} 1 (see the class comment), every field left UNDEF (pointers NULL) as it is, and
     * {@code netName} the NUL-terminated string at {@code netNameAddress}, which the caller keeps alive until NCCL
     * has made the communicator (0 where {@link #netName} is null).
     */
    void write(long address, long netNameAddress) {
        if ((netName == null) != (netNameAddress == 0)) {
            throw new FlexLinkException(Result.INTERNAL_ERROR, "netName: the string's address (0x"
                    + Long.toHexString(netNameAddress) + ") does not match the name " + netName);
        }
        UNSAFE.setMemory(address, FacadeOptions.BYTES, (byte) 0); // padding and the pointers: NULL
        UNSAFE.putLong(address + FacadeOptions.SIZE, FacadeOptions.BYTES);
        UNSAFE.putInt(address + FacadeOptions.MAGIC_AT, FacadeOptions.MAGIC);
        UNSAFE.putInt(address + FacadeOptions.VERSION, FlexNcclConstants.NCCL_VERSION_CODE);
        UNSAFE.putInt(address + FacadeOptions.BLOCKING, 1);
        UNSAFE.putInt(address + FacadeOptions.CGA_CLUSTER_SIZE, cgaClusterSize);
        UNSAFE.putInt(address + FacadeOptions.MIN_CTAS, minCTAs);
        UNSAFE.putInt(address + FacadeOptions.MAX_CTAS, maxCTAs);
        UNSAFE.putLong(address + FacadeOptions.NET_NAME, netNameAddress);
        UNSAFE.putInt(address + FacadeOptions.SPLIT_SHARE, UNDEF);
        UNSAFE.putInt(address + FacadeOptions.TRAFFIC_CLASS, trafficClass);
        UNSAFE.putInt(address + FacadeOptions.COLLNET_ENABLE, collnetEnable);
        UNSAFE.putInt(address + FacadeOptions.CTA_POLICY, ctaPolicy);
        UNSAFE.putInt(address + FacadeOptions.SHRINK_SHARE, UNDEF);
        UNSAFE.putInt(address + FacadeOptions.NVLS_CTAS, nvlsCTAs);
        UNSAFE.putInt(address + FacadeOptions.N_CHANNELS_PER_NET_PEER, nChannelsPerNetPeer);
        UNSAFE.putInt(address + FacadeOptions.NVLINK_CENTRIC_SCHED, nvlinkCentricSched);
        UNSAFE.putInt(address + FacadeOptions.GRAPH_USAGE_MODE, graphUsageMode);
        UNSAFE.putInt(address + FacadeOptions.NUM_RMA_CTX, numRmaCtx);
        UNSAFE.putInt(address + FacadeOptions.MAX_P2P_PEERS, maxP2pPeers);
        UNSAFE.putInt(address + FacadeOptions.GRAPH_STREAM_ORDERING, graphStreamOrdering);
    }

    /** What a log line says of the fields set (empty for {@link #DEFAULT}). */
    String describe() {
        StringBuilder b = new StringBuilder();
        field(b, "cgaClusterSize", cgaClusterSize);
        field(b, "minCTAs", minCTAs);
        field(b, "maxCTAs", maxCTAs);
        if (netName != null) {
            b.append(b.length() == 0 ? "" : " ").append("netName=").append(netName);
        }
        field(b, "trafficClass", trafficClass);
        field(b, "collnetEnable", collnetEnable);
        field(b, "CTAPolicy", ctaPolicy);
        field(b, "nvlsCTAs", nvlsCTAs);
        field(b, "nChannelsPerNetPeer", nChannelsPerNetPeer);
        field(b, "nvlinkCentricSched", nvlinkCentricSched);
        field(b, "graphUsageMode", graphUsageMode);
        field(b, "numRmaCtx", numRmaCtx);
        field(b, "maxP2pPeers", maxP2pPeers);
        field(b, "graphStreamOrdering", graphStreamOrdering);
        return b.toString();
    }

    private static void field(StringBuilder b, String name, int v) {
        if (v != UNDEF) {
            b.append(b.length() == 0 ? "" : " ").append(name).append('=').append(v);
        }
    }

    private static void zeroOrOne(int v, String name) {
        if (v != UNDEF && v != 0 && v != 1) {
            throw invalid(name + ": " + v + " (0, 1 or NCCL_CONFIG_UNDEF_INT)");
        }
    }

    private static void positive(int v, String name) {
        if (v != UNDEF && v < 1) {
            throw invalid(name + ": " + v + " (at least 1, or NCCL_CONFIG_UNDEF_INT)");
        }
    }

    /** "config." + the field: the ncclConfig_t field, as the facade names it too. */
    static FlexLinkException invalid(String why) {
        return new FlexLinkException(Result.INVALID_ARGUMENT, "config." + why);
    }
}
