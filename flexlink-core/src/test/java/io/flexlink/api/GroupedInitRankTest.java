package io.flexlink.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.FlexLinkException;
import io.flexlink.ReduceOp;
import io.flexlink.Result;
import io.flexlink.UniqueId;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.launch.Groups;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code FlexLink.initRank} inside {@code groupStart/groupEnd}: one thread makes several ranks, as NCCL's
 * {@code ncclGroupStart(); ncclCommInitRank(...) × n; ncclGroupEnd();}. The ranks are created by the outermost
 * end, usable after it; bad arguments fail at the call; a creation that fails is what groupEnd throws.
 */
class GroupedInitRankTest {
    private static final int N = 20_011;
    private HostBackend backend;
    private FlexLinkConfig config;

    @BeforeEach
    void open() {
        config = FlexLinkConfig.builder().set(FlexLinkConfig.PATHS, "primary,pcie").set(FlexLinkConfig.SHARE, "pcie=0.5")
                .set(FlexLinkConfig.MIN_SPLIT_BYTES, "0").set(FlexLinkConfig.CHUNK_BYTES, "4K")
                .set(FlexLinkConfig.TUNING_CACHE, "off").set(FlexLinkConfig.INIT_TIMEOUT, "30s").build();
        backend = new HostBackend(config);
    }

    @AfterEach
    void close() {
        assertFalse(Groups.active(), "every test leaves the thread outside a group");
        backend.close();
    }

    /** Makes ranks 0..n-1 of {@code id} in one group; checks the deferred state before the end. */
    private Communicator[] grouped(UniqueId id, int n) {
        Communicator[] c = new Communicator[n];
        FlexLink.groupStart();
        try {
            for (int r = 0; r < n; r++) {
                c[r] = FlexLink.initRank(backend, config, n, id, r, r);
            }
            for (int r = 0; r < n; r++) {
                assertEquals(Result.IN_PROGRESS, c[r].getAsyncError());
                assertEquals(r, c[r].rank());
                assertEquals(n, c[r].size());
                Communicator early = c[r];
                FlexLinkException e = assertThrows(FlexLinkException.class,
                        () -> early.allReduce(0, 0, 1, DataType.INT32, ReduceOp.SUM, null));
                assertEquals(Result.INVALID_USAGE, e.result());
            }
        } finally {
            FlexLink.groupEnd(); // the ranks are made here, the current thread waiting
        }
        return c;
    }

    /** One grouped AllReduce (INT32 SUM) of seeded data on every rank, every element checked. */
    private void checkAllReduce(Communicator[] c, long seed) {
        int n = c.length;
        int[][] in = new int[n][N];
        Random random = new Random(seed);
        long[] want = new long[N];
        DeviceMemory[] send = new DeviceMemory[n];
        DeviceMemory[] recv = new DeviceMemory[n];
        RuntimeStream[] s = new RuntimeStream[n];
        ByteBuffer b = ByteBuffer.allocateDirect(N * 4).order(ByteOrder.nativeOrder());
        try {
            for (int r = 0; r < n; r++) {
                send[r] = backend.allocate(r, N * 4L);
                recv[r] = backend.allocate(r, N * 4L);
                s[r] = backend.createStream(r, "grouped-init-" + r);
                for (int i = 0; i < N; i++) {
                    in[r][i] = random.nextInt(1 << 20) - (1 << 19);
                    want[i] += in[r][i];
                    b.putInt(i * 4, -1);
                }
                backend.upload(recv[r].address(), b);
                for (int i = 0; i < N; i++) {
                    b.putInt(i * 4, in[r][i]);
                }
                backend.upload(send[r].address(), b);
            }
            FlexLink.groupStart();
            for (int r = 0; r < n; r++) {
                c[r].allReduce(send[r].address(), recv[r].address(), N, DataType.INT32, ReduceOp.SUM, s[r]);
            }
            FlexLink.groupEnd();
            for (int r = 0; r < n; r++) {
                s[r].synchronize();
                backend.download(b, recv[r].address());
                for (int i = 0; i < N; i++) {
                    assertEquals((int) want[i], b.getInt(i * 4), "rank " + r + " element " + i);
                }
            }
        } finally {
            for (int r = 0; r < n; r++) {
                if (s[r] != null) {
                    s[r].close();
                }
                if (send[r] != null) {
                    send[r].close();
                }
                if (recv[r] != null) {
                    recv[r].close();
                }
            }
        }
    }

    @Test
    void oneThreadMakesTwoRanksOfAnInProcessId() {
        Communicator[] c = grouped(FlexLink.getUniqueId(), 2);
        try {
            assertEquals(Result.SUCCESS, c[0].getAsyncError());
            assertEquals(1, c[1].device());
            checkAllReduce(c, 17);
        } finally {
            for (Communicator x : c) {
                x.close();
            }
        }
    }

    @Test
    void oneThreadMakesThreeRanksOfAnIdAnyProcessMayJoin() {
        Communicator[] c = grouped(FlexLink.getUniqueIdForProcesses(config), 3);
        try {
            checkAllReduce(c, 18);
        } finally {
            for (Communicator x : c) {
                x.close();
            }
        }
    }

    /** Only the outermost end creates; inner ends leave the ranks deferred. */
    @Test
    void nestedGroupsCreateAtTheOutermostEnd() {
        UniqueId id = FlexLink.getUniqueId();
        FlexLink.groupStart();
        Communicator c0;
        Communicator c1;
        try {
            FlexLink.groupStart();
            c0 = FlexLink.initRank(backend, config, 2, id, 0, 0);
            c1 = FlexLink.initRank(backend, config, 2, id, 1, 1);
            FlexLink.groupEnd();
            assertEquals(Result.IN_PROGRESS, c0.getAsyncError());
        } finally {
            FlexLink.groupEnd();
        }
        try {
            checkAllReduce(new Communicator[] {c0, c1}, 19);
        } finally {
            c0.close();
            c1.close();
        }
    }

    @Test
    void badArgumentsFailAtTheCallAndDeferNothing() {
        UniqueId id = FlexLink.getUniqueId();
        FlexLink.groupStart();
        try {
            assertEquals(Result.INVALID_ARGUMENT, assertThrows(FlexLinkException.class,
                    () -> FlexLink.initRank(backend, config, 2, id, 2, 0)).result());
            assertEquals(Result.INVALID_ARGUMENT, assertThrows(FlexLinkException.class,
                    () -> FlexLink.initRank(backend, config, 0, id, 0, 0)).result());
            assertEquals(Result.INVALID_ARGUMENT, assertThrows(FlexLinkException.class,
                    () -> FlexLink.initRank(backend, config, 2, null, 0, 0)).result());
            FlexLinkException e = assertThrows(FlexLinkException.class,
                    () -> FlexLink.initRank(backend, config, 2, id, 0, 99));
            assertTrue(e.getMessage().contains("device: 99"), e.getMessage());
        } finally {
            FlexLink.groupEnd(); // nothing deferred: returns at once, without error
        }
    }

    /** Two of three ranks in the group: the creation times out, groupEnd throws it, the handles report it. */
    @Test
    void aFailedCreationIsWhatGroupEndThrows() {
        config = config.with(FlexLinkConfig.INIT_TIMEOUT, "300ms");
        UniqueId id = FlexLink.getUniqueId();
        Communicator[] c = new Communicator[2];
        FlexLink.groupStart();
        c[0] = FlexLink.initRank(backend, config, 3, id, 0, 0);
        c[1] = FlexLink.initRank(backend, config, 3, id, 1, 1);
        FlexLinkException e = assertThrows(FlexLinkException.class, FlexLink::groupEnd);
        assertTrue(e.getMessage().contains("2"), e.getMessage()); // names the missing rank
        for (Communicator x : c) {
            assertTrue(x.getAsyncError() != Result.SUCCESS && x.getAsyncError() != Result.IN_PROGRESS);
            FlexLinkException late = assertThrows(FlexLinkException.class,
                    () -> x.allReduce(0, 0, 1, DataType.INT32, ReduceOp.SUM, null));
            assertTrue(late.getMessage().contains("creation at groupEnd failed"), late.getMessage());
            x.close(); // idempotent and harmless on a failed handle
        }
    }
}
