package io.flexlink.cuda;

import static io.flexlink.cuda.FlexNccl.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.ReduceOp;
import io.flexlink.UniqueId;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.cuda.NcclFacade.FacadeComm;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.bytedeco.cuda.nccl.ncclComm;
import org.bytedeco.javacpp.BytePointer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The facade's ways of making a rank, on the host backend (no CUDA needed): grouped ncclCommInitRank of two
 * ranks in one thread, non-blocking creation polled to success through ncclCommGetAsyncError, a failed
 * background creation reported by ncclGetLastError, and bad arguments refused with nothing made. The
 * communicators are made through {@link FacadeCreation} with a host {@link FacadeCreation.Maker}, the same
 * path as {@link FacadeCreation#CUDA} but for the backend.
 */
class FacadeCreationTest {
    private static final int N = 30_011;
    private HostBackend backend;
    private FlexLinkConfig config;
    private FacadeCreation creation;
    private volatile int nextDevice;

    @BeforeEach
    void open() {
        config(FlexLinkConfig.builder().set(FlexLinkConfig.HOST_DEVICES, "4").set(FlexLinkConfig.TUNING_CACHE, "off")
                .set(FlexLinkConfig.INIT_TIMEOUT, "60s").build());
    }

    private void config(FlexLinkConfig c) {
        if (backend != null) {
            backend.close();
        }
        config = c.conclude();
        backend = new HostBackend(config);
        creation = new FacadeCreation(new FacadeCreation.Maker() {
            @Override
            public int device() {
                return nextDevice;
            }

            @Override
            public FacadeComm make(long handle, int nranks, UniqueId id, int rank, int device, FacadeOptions o) {
                return new FacadeComm(handle, FlexLink.initRank(backend, config, nranks, id, rank, device), null, null,
                        o.commName(), o.blocking());
            }
        });
    }

    @AfterEach
    void close() {
        assertEquals(0, NcclFacade.groupDepth());
        backend.close();
    }

    private byte[] id() {
        return FlexLink.getUniqueIdForProcesses(config).toBytes();
    }

    /** Rank {@code rank} on device {@code rank}; returns the code, the handle into {@code comm} when written. */
    private int init(ncclComm comm, int nranks, byte[] id, int rank, FacadeOptions options) {
        long[] h = new long[1];
        nextDevice = rank;
        int rc = creation.initRank(h, nranks, id, rank, options);
        if (h[0] != 0) {
            NcclFacade.setAddress(comm, h[0]);
        }
        return rc;
    }

    private static int asyncError(ncclComm comm) {
        int[] e = {-1};
        assertEquals(ncclSuccess, ncclCommGetAsyncError(comm, e));
        return e[0];
    }

    /** Polls like an NCCL program does for a non-blocking communicator; the creation bounds it (initTimeout). */
    private static int pollUntilDone(ncclComm comm) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        int e;
        while ((e = asyncError(comm)) == ncclInProgress) {
            assertTrue(System.nanoTime() < deadline, "creation never finished");
            Thread.onSpinWait();
        }
        return e;
    }

    /** One AllReduce (INT32 SUM) of seeded data through the communicators behind the handles; every element checked. */
    private void checkAllReduce(ncclComm[] comms, long seed) {
        int n = comms.length;
        Communicator[] c = new Communicator[n];
        DeviceMemory[] send = new DeviceMemory[n];
        DeviceMemory[] recv = new DeviceMemory[n];
        RuntimeStream[] s = new RuntimeStream[n];
        long[] want = new long[N];
        Random random = new Random(seed);
        ByteBuffer b = ByteBuffer.allocateDirect(N * 4).order(ByteOrder.nativeOrder());
        for (int r = 0; r < n; r++) {
            c[r] = NcclFacade.lookup(comms[r]).comm;
            send[r] = backend.allocate(c[r].device(), N * 4L);
            recv[r] = backend.allocate(c[r].device(), N * 4L);
            s[r] = backend.createStream(c[r].device(), "facade-creation-" + r);
            for (int i = 0; i < N; i++) {
                b.putInt(i * 4, -1);
            }
            backend.upload(recv[r].address(), b);
            for (int i = 0; i < N; i++) {
                int v = random.nextInt(1 << 20) - (1 << 19);
                want[i] += v;
                b.putInt(i * 4, v);
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
            s[r].close();
            send[r].close();
            recv[r].close();
        }
    }

    private static void destroy(ncclComm... comms) {
        for (ncclComm c : comms) {
            assertEquals(ncclSuccess, ncclCommDestroy(c));
            assertEquals(ncclInvalidArgument, ncclCommCount(c, new int[1]), "destroyed");
            NcclFacade.setAddress(c, 0);
        }
    }

    @Test
    void groupedInitRankMakesTwoRanksInOneThread() {
        byte[] id = id();
        ncclComm[] comms = {new ncclComm(), new ncclComm()};
        assertEquals(ncclSuccess, ncclGroupStart());
        assertEquals(ncclSuccess, init(comms[0], 2, id, 0, FacadeOptions.DEFAULT));
        assertEquals(ncclSuccess, init(comms[1], 2, id, 1, FacadeOptions.DEFAULT));
        assertEquals(ncclInProgress, asyncError(comms[0]), "made by the group's end");
        assertEquals(ncclInvalidArgument, ncclCommCount(comms[1], new int[1]), "not made yet: refused, as NCCL's");
        assertEquals(ncclSuccess, ncclGroupEnd());
        int[] v = new int[1];
        for (int r = 0; r < 2; r++) {
            assertEquals(ncclSuccess, asyncError(comms[r]));
            assertEquals(ncclSuccess, ncclCommCount(comms[r], v));
            assertEquals(2, v[0]);
            assertEquals(ncclSuccess, ncclCommUserRank(comms[r], v));
            assertEquals(r, v[0]);
        }
        checkAllReduce(comms, 41);
        destroy(comms);
    }

    @Test
    void nonBlockingCreationIsPolledToSuccess() {
        byte[] id = id();
        FacadeOptions nonBlocking = new FacadeOptions(false, "trainer-dp");
        ncclComm[] comms = {new ncclComm(), new ncclComm()};
        assertEquals(ncclInProgress, init(comms[0], 2, id, 0, nonBlocking));
        // rank 0 cannot be made before rank 1 exists: its async error is ncclInProgress now, and every call that
        // needs it is refused with ncclInvalidArgument (NCCL's ncclCommEnsureReady), nothing accepted or dropped
        assertEquals(ncclInProgress, asyncError(comms[0]));
        assertEquals(ncclInvalidArgument, ncclAllReduce(null, null, 1, ncclInt32, ncclSum, comms[0], null));
        assertTrue(ncclGetLastError(null).getString().contains("used before its creation returned ncclSuccess"),
                ncclGetLastError(null).getString());
        assertEquals(ncclInvalidArgument, ncclBcast(null, 1, ncclInt32, 0, comms[0], null));
        assertEquals(ncclInvalidArgument, ncclCommUserRank(comms[0], new int[1]));
        assertEquals(ncclInProgress, init(comms[1], 2, id, 1, nonBlocking));
        for (ncclComm c : comms) {
            assertEquals(ncclSuccess, pollUntilDone(c));
            assertEquals("comm 0x" + Long.toHexString(c.address()) + " 'trainer-dp'", NcclFacade.lookup(c).label);
        }
        checkAllReduce(comms, 42);
        destroy(comms);
    }

    @Test
    void aGroupOfNonBlockingRanksEndsInProgress() {
        byte[] id = id();
        FacadeOptions nonBlocking = new FacadeOptions(false, null);
        ncclComm[] comms = {new ncclComm(), new ncclComm(), new ncclComm()};
        assertEquals(ncclSuccess, ncclGroupStart());
        for (int r = 0; r < 3; r++) {
            assertEquals(ncclSuccess, init(comms[r], 3, id, r, nonBlocking));
        }
        assertEquals(ncclInProgress, ncclGroupEnd());
        for (ncclComm c : comms) {
            assertEquals(ncclSuccess, pollUntilDone(c));
        }
        checkAllReduce(comms, 43);
        destroy(comms);
    }

    /** A background creation that fails (rank 1 never comes): its error through the async error and ncclGetLastError. */
    @Test
    void aFailedBackgroundCreationIsReported() {
        config(config.with(FlexLinkConfig.INIT_TIMEOUT, "300ms"));
        ncclComm comm = new ncclComm();
        assertEquals(ncclInProgress, init(comm, 2, FlexLink.getUniqueId().toBytes(), 0,
                new FacadeOptions(false, "lonely")));
        int e = pollUntilDone(comm);
        assertTrue(e != ncclSuccess, "rank 1 never came");
        assertEquals(e, ncclAllReduce(null, null, 1, ncclInt32, ncclSum, comm, null));
        BytePointer text = ncclGetLastError(comm);
        assertTrue(text.getString().contains("'lonely'") && text.getString().contains("timed out"), text.getString());
        destroy(comm);
    }

    @Test
    void badArgumentsAreRefusedWithNothingMade() {
        byte[] id = id();
        long[] h = new long[1];
        assertEquals(ncclInvalidArgument, creation.initRank(h, 0, id, 0, FacadeOptions.DEFAULT));
        assertEquals(ncclInvalidArgument, creation.initRank(h, 2, id, 2, FacadeOptions.DEFAULT));
        assertEquals(ncclInvalidArgument, creation.initRank(h, 2, id, -1, FacadeOptions.DEFAULT));
        assertEquals(ncclInvalidArgument, creation.initRank(h, FlexLink.MAX_RANKS + 1, id, 0, FacadeOptions.DEFAULT));
        assertEquals(ncclInvalidArgument, creation.initRank(h, 2, new byte[NCCL_UNIQUE_ID_BYTES], 0,
                FacadeOptions.DEFAULT));
        assertTrue(ncclGetLastError(null).getString().contains("not a FlexLink unique id"),
                ncclGetLastError(null).getString());
        assertEquals(0, h[0], "no handle written");
        // inside a group too: nothing is deferred, and the group's end has nothing to make
        assertEquals(ncclSuccess, ncclGroupStart());
        assertEquals(ncclInvalidArgument, creation.initRank(h, 2, id, 5, FacadeOptions.DEFAULT));
        assertEquals(ncclSuccess, ncclGroupEnd());
        assertEquals(0, h[0]);
        ncclResetDebugInit(); // no NCCL here: nothing to reset, and nothing thrown
    }

    /** ncclCommInitRankConfig refuses a bad config before anything else, naming the field. */
    @Test
    void aBadConfigIsAnInvalidArgumentNamingTheField() {
        try (BytePointer config = new BytePointer(FacadeOptions.BYTES)) {
            FacadeOptionsTest.initializer(config.address());
            io.flexlink.runtime.NativeMemory.UNSAFE.putInt(config.address() + FacadeOptions.BLOCKING, 2);
            ncclComm comm = new ncclComm();
            assertEquals(ncclInvalidArgument, FacadeInit.initRankConfig(comm, 2, null, 0, config));
            assertEquals(0, comm.address());
            String last = ncclGetLastError(null).getString();
            assertTrue(last.contains("config.blocking: 2"), last);
        }
    }

    /** ncclCommInitRankScalable: two ids in native memory, as a C program passes them; the ranks meet at the first. */
    @Test
    void scalableInitMeetsAtTheFirstIdAndChecksEveryId() {
        FacadeOptions nonBlocking = new FacadeOptions(false, "scalable");
        ncclComm[] comms = {new ncclComm(), new ncclComm()};
        try (BytePointer ids = new BytePointer(2L * NCCL_UNIQUE_ID_BYTES)) {
            ids.put(id(), 0, NCCL_UNIQUE_ID_BYTES).position(NCCL_UNIQUE_ID_BYTES).put(id(), 0, NCCL_UNIQUE_ID_BYTES);
            ids.position(0);
            for (int r = 0; r < 2; r++) {
                long[] h = new long[1];
                nextDevice = r;
                assertEquals(ncclInProgress, FacadeInit.scalable(h, 2, r, 2, ids.address(), nonBlocking, creation));
                NcclFacade.setAddress(comms[r], h[0]);
            }
            for (ncclComm c : comms) {
                assertEquals(ncclSuccess, pollUntilDone(c));
            }
            checkAllReduce(comms, 44);
            destroy(comms);
            long[] h = new long[1];
            assertEquals(ncclInvalidArgument, FacadeInit.scalable(h, 2, 0, 0, ids.address(), nonBlocking, creation));
            assertTrue(ncclGetLastError(null).getString().contains("nId: 0 is not in [1, nranks = 2]"));
            assertEquals(ncclInvalidArgument, FacadeInit.scalable(h, 2, 0, 3, ids.address(), nonBlocking, creation));
            assertEquals(ncclInvalidArgument, FacadeInit.scalable(h, 2, 0, 1, 0, nonBlocking, creation));
            assertTrue(ncclGetLastError(null).getString().contains("commIds: NULL"));
            ids.position(NCCL_UNIQUE_ID_BYTES).put(new byte[NCCL_UNIQUE_ID_BYTES], 0, NCCL_UNIQUE_ID_BYTES).position(0);
            assertEquals(ncclInvalidArgument, FacadeInit.scalable(h, 2, 0, 2, ids.address(), nonBlocking, creation));
            assertTrue(ncclGetLastError(null).getString().contains("commIds[1]: "), ncclGetLastError(null).getString());
            assertEquals(0, h[0], "no handle written");
        }
        assertEquals(ncclInvalidArgument, ncclCommInitRankScalable((ncclComm) null, 2, 0, 1, null, null));
    }

    @Test
    void destroyingAHandleBeingMadeFreesItOnceMade() {
        byte[] id = id();
        ncclComm[] comms = {new ncclComm(), new ncclComm()};
        FacadeOptions nonBlocking = new FacadeOptions(false, null);
        assertEquals(ncclInProgress, init(comms[0], 2, id, 0, nonBlocking));
        assertEquals(ncclSuccess, ncclCommDestroy(comms[0]), "released while in progress");
        assertEquals(ncclInProgress, init(comms[1], 2, id, 1, nonBlocking));
        assertEquals(ncclSuccess, pollUntilDone(comms[1]));
        assertNotNull(NcclFacade.lookup(comms[1]));
        assertFalse(NcclFacade.lookup(comms[0]) != null, "rank 0 was closed when made, never put in the table");
        destroy(comms[1]);
        NcclFacade.setAddress(comms[0], 0);
    }
}
