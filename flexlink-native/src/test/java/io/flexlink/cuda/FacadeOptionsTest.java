package io.flexlink.cuda;

import static io.flexlink.runtime.NativeMemory.UNSAFE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** ncclConfig_t as the facade reads it: NCCL's initializer, blocking and commName, NCCL's checks of each field. */
class FacadeOptionsTest {
    private long config;
    private long name;

    /** What NCCL_CONFIG_INITIALIZER writes (NCCL 2.30 headers): size, magic, version, every field undefined. */
    static void initializer(long at) {
        UNSAFE.setMemory(at, FacadeOptions.BYTES, (byte) 0);
        UNSAFE.putLong(at + FacadeOptions.SIZE, FacadeOptions.BYTES);
        UNSAFE.putInt(at + FacadeOptions.MAGIC_AT, FacadeOptions.MAGIC);
        UNSAFE.putInt(at + FacadeOptions.VERSION, 23007);
        for (int off = FacadeOptions.BLOCKING; off < FacadeOptions.BYTES; off += 4) {
            if (off != FacadeOptions.NET_NAME && off != FacadeOptions.NET_NAME + 4 && off != FacadeOptions.COMM_NAME
                    && off != FacadeOptions.COMM_NAME + 4) {
                UNSAFE.putInt(at + off, FacadeOptions.UNDEF);
            }
        }
    }

    @BeforeEach
    void allocate() {
        config = UNSAFE.allocateMemory(FacadeOptions.BYTES);
        initializer(config);
        byte[] b = "tensor-parallel \u00e9\0".getBytes(StandardCharsets.UTF_8);
        name = UNSAFE.allocateMemory(b.length);
        UNSAFE.copyMemory(b, UNSAFE.arrayBaseOffset(byte[].class), null, name, b.length);
    }

    @AfterEach
    void free() {
        UNSAFE.freeMemory(config);
        UNSAFE.freeMemory(name);
    }

    private void put(int offset, int v) {
        UNSAFE.putInt(config + offset, v);
    }

    private String refused() {
        FlexLinkException e = assertThrows(FlexLinkException.class, () -> FacadeOptions.read(config));
        assertEquals(Result.INVALID_ARGUMENT, e.result());
        return e.getMessage();
    }

    @Test
    void theInitializerAndNullAreTheDefaults() {
        assertEquals(FacadeOptions.DEFAULT, FacadeOptions.read(0));
        assertEquals(new FacadeOptions(true, null), FacadeOptions.read(config));
    }

    @Test
    void blockingAndCommNameAreRead() {
        put(FacadeOptions.BLOCKING, 0);
        UNSAFE.putLong(config + FacadeOptions.COMM_NAME, name);
        assertEquals(new FacadeOptions(false, "tensor-parallel \u00e9"), FacadeOptions.read(config));
        put(FacadeOptions.BLOCKING, 1);
        assertTrue(FacadeOptions.read(config).blocking());
    }

    @Test
    void everyBadFieldIsNamed() {
        String[][] cases = {
            {"" + FacadeOptions.BLOCKING, "2", "config.blocking: 2"},
            {"" + FacadeOptions.CGA_CLUSTER_SIZE, "-1", "config.cgaClusterSize"},
            {"" + FacadeOptions.MIN_CTAS, "0", "config.minCTAs"},
            {"" + FacadeOptions.MAX_CTAS, "-3", "config.maxCTAs"},
            {"" + FacadeOptions.SPLIT_SHARE, "3", "config.splitShare"},
            {"" + FacadeOptions.COLLNET_ENABLE, "2", "config.collnetEnable"},
            {"" + FacadeOptions.SHRINK_SHARE, "-1", "config.shrinkShare"},
            {"" + FacadeOptions.NVLS_CTAS, "0", "config.nvlsCTAs"},
            {"" + FacadeOptions.N_CHANNELS_PER_NET_PEER, "0", "config.nChannelsPerNetPeer"},
            {"" + FacadeOptions.NVLINK_CENTRIC_SCHED, "7", "config.nvlinkCentricSched"},
            {"" + FacadeOptions.GRAPH_USAGE_MODE, "3", "config.graphUsageMode"},
            {"" + FacadeOptions.NUM_RMA_CTX, "0", "config.numRmaCtx"},
            {"" + FacadeOptions.GRAPH_STREAM_ORDERING, "2", "config.graphStreamOrdering: 2"},
        };
        for (String[] c : cases) {
            initializer(config);
            put(Integer.parseInt(c[0]), Integer.parseInt(c[1]));
            String m = refused();
            assertTrue(m.contains(c[2]), c[2] + ": " + m);
        }
        initializer(config);
        put(FacadeOptions.MIN_CTAS, 8);
        put(FacadeOptions.MAX_CTAS, 4);
        assertTrue(refused().contains("config.minCTAs: 8 is more than maxCTAs 4"));
        initializer(config);
        put(FacadeOptions.MAGIC_AT, 0);
        assertTrue(refused().contains("config.magic"));
    }

    /** maxP2pPeers is NCCL's to clamp (below 1 or above the ranks is the ranks): any value is taken, as NCCL does. */
    @Test
    void maxP2pPeersIsNotChecked() {
        for (int v : new int[] {-5, 0, 1, 1 << 20}) {
            put(FacadeOptions.MAX_P2P_PEERS, v);
            assertEquals(v, FacadeOptions.read(config).tuning().maxP2pPeers());
        }
    }

    /** Fields past the struct's size, or newer than its headers' version, are NCCL's defaults: not read. */
    @Test
    void fieldsPastTheSizeOrVersionAreNotRead() {
        put(FacadeOptions.NVLS_CTAS, 0); // bad, but a 2.26 struct has no nvlsCTAs
        put(FacadeOptions.VERSION, 22605);
        assertEquals(FacadeOptions.DEFAULT, FacadeOptions.read(config));
        put(FacadeOptions.NVLS_CTAS, FacadeOptions.UNDEF);
        put(FacadeOptions.GRAPH_STREAM_ORDERING, 5); // bad, but a 2.29 struct has no graphStreamOrdering
        put(FacadeOptions.VERSION, 22903);
        assertEquals(FacadeOptions.DEFAULT, FacadeOptions.read(config));
        UNSAFE.putLong(config + FacadeOptions.SIZE, 88); // a 2.29 program's struct, with the 2.30 version: not read
        put(FacadeOptions.VERSION, 23007);
        assertEquals(FacadeOptions.DEFAULT, FacadeOptions.read(config));
        UNSAFE.putLong(config + FacadeOptions.SIZE, FacadeOptions.BLOCKING + 4); // blocking only
        UNSAFE.putLong(config + FacadeOptions.COMM_NAME, name);
        put(FacadeOptions.BLOCKING, 0);
        FacadeOptions o = FacadeOptions.read(config);
        assertEquals(false, o.blocking());
        assertNull(o.commName());
    }

    @Test
    void aCommNameWithoutItsNulIsRefused() {
        long big = UNSAFE.allocateMemory(FacadeOptions.MAX_NAME_BYTES + 8);
        try {
            UNSAFE.setMemory(big, FacadeOptions.MAX_NAME_BYTES + 8, (byte) 'x');
            UNSAFE.putLong(config + FacadeOptions.COMM_NAME, big);
            assertTrue(refused().contains("config.commName"));
        } finally {
            UNSAFE.freeMemory(big);
        }
    }
}
