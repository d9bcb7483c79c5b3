package io.flexlink.cuda;

import static io.flexlink.runtime.NativeMemory.UNSAFE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import java.nio.charset.StandardCharsets;
import java.util.function.ToIntFunction;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The NCCL tuning of an ncclConfig_t on its way to the primary: each field the facade reads into the
 * {@link NcclTuning} it hands on, fields past the struct's size or version left undefined, and the primary's
 * ncclConfig_t written from a tuning with exactly its values (into plain memory: no NCCL needed).
 */
class FacadeTuningTest {
    private static final int UNDEF = NcclTuning.UNDEF;
    /** Each int field of the tuning: its offset in ncclConfig_t, a valid value that no other field has, its getter. */
    private static final Object[][] INTS = {
        {FacadeOptions.CGA_CLUSTER_SIZE, 3, (ToIntFunction<NcclTuning>) NcclTuning::cgaClusterSize},
        {FacadeOptions.MIN_CTAS, 5, (ToIntFunction<NcclTuning>) NcclTuning::minCTAs},
        {FacadeOptions.MAX_CTAS, 12, (ToIntFunction<NcclTuning>) NcclTuning::maxCTAs},
        {FacadeOptions.TRAFFIC_CLASS, 106, (ToIntFunction<NcclTuning>) NcclTuning::trafficClass},
        {FacadeOptions.COLLNET_ENABLE, 1, (ToIntFunction<NcclTuning>) NcclTuning::collnetEnable},
        {FacadeOptions.CTA_POLICY, 7, (ToIntFunction<NcclTuning>) NcclTuning::ctaPolicy},
        {FacadeOptions.NVLS_CTAS, 9, (ToIntFunction<NcclTuning>) NcclTuning::nvlsCTAs},
        {FacadeOptions.N_CHANNELS_PER_NET_PEER, 11, (ToIntFunction<NcclTuning>) NcclTuning::nChannelsPerNetPeer},
        {FacadeOptions.NVLINK_CENTRIC_SCHED, 0, (ToIntFunction<NcclTuning>) NcclTuning::nvlinkCentricSched},
        {FacadeOptions.GRAPH_USAGE_MODE, 2, (ToIntFunction<NcclTuning>) NcclTuning::graphUsageMode},
        {FacadeOptions.NUM_RMA_CTX, 4, (ToIntFunction<NcclTuning>) NcclTuning::numRmaCtx},
        {FacadeOptions.MAX_P2P_PEERS, 13, (ToIntFunction<NcclTuning>) NcclTuning::maxP2pPeers},
        {FacadeOptions.GRAPH_STREAM_ORDERING, 1, (ToIntFunction<NcclTuning>) NcclTuning::graphStreamOrdering},
    };
    /** Every field of {@link #INTS} set, and netName "IB". */
    private static final NcclTuning ALL = NcclTuning.DEFAULT.cgaClusterSize(3).minCTAs(5).maxCTAs(12).netName("IB")
            .trafficClass(106).collnetEnable(1).ctaPolicy(7).nvlsCTAs(9).nChannelsPerNetPeer(11).nvlinkCentricSched(0)
            .graphUsageMode(2).numRmaCtx(4).maxP2pPeers(13).graphStreamOrdering(1);

    private long config;
    private long net;

    @BeforeEach
    void allocate() {
        config = UNSAFE.allocateMemory(FacadeOptions.BYTES);
        FacadeOptionsTest.initializer(config);
        byte[] b = "IB\0".getBytes(StandardCharsets.UTF_8);
        net = UNSAFE.allocateMemory(b.length);
        UNSAFE.copyMemory(b, UNSAFE.arrayBaseOffset(byte[].class), null, net, b.length);
    }

    @AfterEach
    void free() {
        UNSAFE.freeMemory(config);
        UNSAFE.freeMemory(net);
    }

    private static int offset(Object[] f) {
        return (Integer) f[0];
    }

    private static int value(Object[] f) {
        return (Integer) f[1];
    }

    @SuppressWarnings("unchecked")
    private static int get(Object[] f, NcclTuning t) {
        return ((ToIntFunction<NcclTuning>) f[2]).applyAsInt(t);
    }

    private void setAll() {
        for (Object[] f : INTS) {
            UNSAFE.putInt(config + offset(f), value(f));
        }
        UNSAFE.putLong(config + FacadeOptions.NET_NAME, net);
    }

    @Test
    void theInitializerLeavesEveryFieldToNccl() {
        assertEquals(NcclTuning.DEFAULT, FacadeOptions.read(config).tuning());
        assertEquals(NcclTuning.DEFAULT, FacadeOptions.read(0).tuning());
        assertEquals("", NcclTuning.DEFAULT.describe());
    }

    /** One field at a time, so that a field read from another's offset shows. */
    @Test
    void eachTuningFieldIsReadIntoItsOwnComponent() {
        for (Object[] f : INTS) {
            FacadeOptionsTest.initializer(config);
            UNSAFE.putInt(config + offset(f), value(f));
            NcclTuning t = FacadeOptions.read(config).tuning();
            for (Object[] g : INTS) {
                assertEquals(g == f ? value(f) : UNDEF, get(g, t), "offset " + offset(f) + " read into " + offset(g));
            }
            assertNull(t.netName());
        }
        FacadeOptionsTest.initializer(config);
        UNSAFE.putLong(config + FacadeOptions.NET_NAME, net);
        assertEquals(NcclTuning.DEFAULT.netName("IB"), FacadeOptions.read(config).tuning());
    }

    @Test
    void everyFieldTogetherAndTheSharesAreNotTuning() {
        setAll();
        UNSAFE.putInt(config + FacadeOptions.SPLIT_SHARE, 1);
        UNSAFE.putInt(config + FacadeOptions.SHRINK_SHARE, 1);
        UNSAFE.putInt(config + FacadeOptions.BLOCKING, 0);
        FacadeOptions o = FacadeOptions.read(config);
        assertEquals(ALL, o.tuning());
        assertEquals(false, o.blocking(), "the user's blocking stays the facade's, not the primary's");
        assertEquals("cgaClusterSize=3 minCTAs=5 maxCTAs=12 netName=IB trafficClass=106 collnetEnable=1 CTAPolicy=7 "
                + "nvlsCTAs=9 nChannelsPerNetPeer=11 nvlinkCentricSched=0 graphUsageMode=2 numRmaCtx=4 "
                + "maxP2pPeers=13 graphStreamOrdering=1", ALL.describe());
    }

    /** A shorter struct (older headers) or an older version: the fields it lacks stay NCCL_CONFIG_UNDEF_INT. */
    @Test
    void fieldsBeyondTheSizeOrVersionStayUndefined() {
        setAll();
        UNSAFE.putLong(config + FacadeOptions.SIZE, FacadeOptions.NET_NAME); // up to maxCTAs
        NcclTuning t = FacadeOptions.read(config).tuning();
        assertEquals(NcclTuning.DEFAULT.cgaClusterSize(3).minCTAs(5).maxCTAs(12), t);
        UNSAFE.putLong(config + FacadeOptions.SIZE, FacadeOptions.BYTES);
        UNSAFE.putInt(config + FacadeOptions.VERSION, 22605); // 2.26: nothing from collnetEnable on
        t = FacadeOptions.read(config).tuning();
        assertEquals(NcclTuning.DEFAULT.cgaClusterSize(3).minCTAs(5).maxCTAs(12).netName("IB").trafficClass(106), t);
        UNSAFE.putInt(config + FacadeOptions.VERSION, 22805); // 2.28: no graphUsageMode, no numRmaCtx
        t = FacadeOptions.read(config).tuning();
        assertEquals(ALL.graphUsageMode(UNDEF).numRmaCtx(UNDEF).maxP2pPeers(UNDEF).graphStreamOrdering(UNDEF), t);
        UNSAFE.putInt(config + FacadeOptions.VERSION, 22903); // 2.29: no maxP2pPeers, no graphStreamOrdering
        assertEquals(ALL.maxP2pPeers(UNDEF).graphStreamOrdering(UNDEF), FacadeOptions.read(config).tuning());
        UNSAFE.putLong(config + FacadeOptions.SIZE, FacadeOptions.NUM_RMA_CTX); // 2.29 headers without the last
        assertEquals(ALL.numRmaCtx(UNDEF).maxP2pPeers(UNDEF).graphStreamOrdering(UNDEF),
                FacadeOptions.read(config).tuning());
        UNSAFE.putInt(config + FacadeOptions.VERSION, 23007);
        UNSAFE.putLong(config + FacadeOptions.SIZE, FacadeOptions.GRAPH_STREAM_ORDERING); // 2.30 without the last
        assertEquals(ALL.graphStreamOrdering(UNDEF), FacadeOptions.read(config).tuning());
        UNSAFE.putLong(config + FacadeOptions.SIZE, FacadeOptions.BYTES + 24); // a later struct: its extra unread
        assertEquals(ALL, FacadeOptions.read(config).tuning());
    }

    /** The primary's config: NCCL_CONFIG_INITIALIZER of the headers, blocking 1, then exactly the tuning's values. */
    @Test
    void thePrimarysConfigHasExactlyTheTuningsValues() {
        long out = UNSAFE.allocateMemory(FacadeOptions.BYTES);
        try {
            UNSAFE.setMemory(out, FacadeOptions.BYTES, (byte) 0x5a); // garbage: every byte must be written
            ALL.write(out, net);
            assertEquals(FacadeOptions.BYTES, UNSAFE.getLong(out + FacadeOptions.SIZE));
            assertEquals(0xcafebeef, UNSAFE.getInt(out + FacadeOptions.MAGIC_AT));
            assertEquals(FlexNcclConstants.NCCL_VERSION_CODE, UNSAFE.getInt(out + FacadeOptions.VERSION));
            assertEquals(1, UNSAFE.getInt(out + FacadeOptions.BLOCKING));
            for (Object[] f : INTS) {
                assertEquals(value(f), UNSAFE.getInt(out + offset(f)), "offset " + offset(f));
            }
            assertEquals(net, UNSAFE.getLong(out + FacadeOptions.NET_NAME));
            assertEquals(UNDEF, UNSAFE.getInt(out + FacadeOptions.SPLIT_SHARE));
            assertEquals(UNDEF, UNSAFE.getInt(out + FacadeOptions.SHRINK_SHARE));
            assertEquals(0, UNSAFE.getLong(out + FacadeOptions.COMM_NAME));
            FacadeOptions back = FacadeOptions.read(out);
            assertEquals(ALL, back.tuning(), "the facade reads back what was written");
            assertTrue(back.blocking());
            assertNull(back.commName());
        } finally {
            UNSAFE.freeMemory(out);
        }
    }

    /** The default tuning writes NCCL_CONFIG_INITIALIZER byte for byte, but for blocking = 1. */
    @Test
    void theDefaultTuningWritesTheInitializerWithBlocking() {
        long out = UNSAFE.allocateMemory(FacadeOptions.BYTES);
        try {
            UNSAFE.setMemory(out, FacadeOptions.BYTES, (byte) 0x5a);
            NcclTuning.DEFAULT.write(out, 0);
            UNSAFE.putInt(config + FacadeOptions.BLOCKING, 1);
            for (int i = 0; i < FacadeOptions.BYTES; i++) {
                assertEquals(UNSAFE.getByte(config + i), UNSAFE.getByte(out + i), "byte " + i);
            }
            FlexLinkException e = assertThrows(FlexLinkException.class, () -> NcclTuning.DEFAULT.write(out, net));
            assertEquals(Result.INTERNAL_ERROR, e.result());
        } finally {
            UNSAFE.freeMemory(out);
        }
    }

    /** A core user's tuning is checked as the facade's: INVALID_ARGUMENT naming the field. */
    @Test
    void aBadTuningIsRefusedNamingTheField() {
        String[][] cases = {
            {"cgaClusterSize", "config.cgaClusterSize: -1"},
            {"minCTAs", "config.minCTAs: 0"},
            {"nvlsCTAs", "config.nvlsCTAs: 0"},
            {"graphUsageMode", "config.graphUsageMode: 3"},
            {"collnetEnable", "config.collnetEnable: 2"},
            {"graphStreamOrdering", "config.graphStreamOrdering: -1"},
        };
        for (String[] c : cases) {
            FlexLinkException e = assertThrows(FlexLinkException.class, () -> {
                switch (c[0]) {
                    case "cgaClusterSize" -> NcclTuning.DEFAULT.cgaClusterSize(-1);
                    case "minCTAs" -> NcclTuning.DEFAULT.minCTAs(0);
                    case "nvlsCTAs" -> NcclTuning.DEFAULT.nvlsCTAs(0);
                    case "graphUsageMode" -> NcclTuning.DEFAULT.graphUsageMode(3);
                    case "graphStreamOrdering" -> NcclTuning.DEFAULT.graphStreamOrdering(-1);
                    default -> NcclTuning.DEFAULT.collnetEnable(2);
                }
            });
            assertEquals(Result.INVALID_ARGUMENT, e.result());
            assertTrue(e.getMessage().contains(c[1]), e.getMessage());
        }
        FlexLinkException e = assertThrows(FlexLinkException.class, () -> NcclTuning.DEFAULT.minCTAs(8).maxCTAs(4));
        assertTrue(e.getMessage().contains("config.minCTAs: 8 is more than maxCTAs 4"), e.getMessage());
        e = assertThrows(FlexLinkException.class, () -> NcclTuning.DEFAULT.netName("a\0b"));
        assertTrue(e.getMessage().contains("config.netName"), e.getMessage());
        assertEquals(-5, NcclTuning.DEFAULT.ctaPolicy(-5).trafficClass(-6).ctaPolicy(), "left to NCCL at creation");
    }
}
