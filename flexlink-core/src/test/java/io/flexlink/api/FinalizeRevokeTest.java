package io.flexlink.api;

import static io.flexlink.api.SplitTest.children;
import static io.flexlink.api.SplitTest.closeAll;
import static io.flexlink.api.SplitTest.everyCollectiveExact;
import static io.flexlink.api.SplitTest.split;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.FlexLinkException;
import io.flexlink.ReduceOp;
import io.flexlink.Result;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.IntUnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * {@link Communicator#finalizeComm()} and {@link Communicator#revoke()}, NCCL's ncclCommFinalize and ncclCommRevoke,
 * on the host backend: finalize drains the work already enqueued (its results are complete and exact) and leaves
 * only close; revoke releases a call stuck on a peer that never came, here and (as REMOTE_ERROR) at the peer,
 * reports IN_PROGRESS then SUCCESS, and leaves split and close; each state refuses what NCCL refuses, with NCCL's
 * codes, and a refused call changes nothing.
 */
class FinalizeRevokeTest {
    private static final FlexLinkConfig CONFIG = FlexLinkConfig.builder().set(FlexLinkConfig.HOST_DEVICES, "4")
            .set(FlexLinkConfig.SHARE, "pcie=0.25").set(FlexLinkConfig.MIN_SPLIT_BYTES, "0")
            .set(FlexLinkConfig.CHUNK_BYTES, "4K").set(FlexLinkConfig.INIT_TIMEOUT, "30s")
            .set(FlexLinkConfig.TUNING_CACHE, "off").build();
    private static final int N = 20_011;

    /** Device buffers and a stream per rank, for calls made by hand. */
    private static final class Buffers implements AutoCloseable {
        final DeviceMemory[] send;
        final DeviceMemory[] recv;
        final RuntimeStream[] streams;
        final HostBackend backend;

        Buffers(HostBackend backend, Communicator[] comms) {
            this.backend = backend;
            int n = comms.length;
            send = new DeviceMemory[n];
            recv = new DeviceMemory[n];
            streams = new RuntimeStream[n];
            ByteBuffer b = ByteBuffer.allocateDirect(4 * N).order(ByteOrder.nativeOrder());
            for (int r = 0; r < n; r++) {
                send[r] = backend.allocate(comms[r].device(), 4L * N);
                recv[r] = backend.allocate(comms[r].device(), 4L * N);
                streams[r] = backend.createStream(comms[r].device(), "lifecycle.r" + r);
                for (int i = 0; i < N; i++) {
                    b.putInt(4 * i, (r + 1) * (i % 1000));
                }
                backend.upload(send[r].address(), b);
                backend.fill(recv[r].address(), 4L * N, (byte) 0x7f);
            }
        }

        Executable allReduce(Communicator c, int r) {
            return () -> c.allReduce(send[r].address(), recv[r].address(), N, DataType.INT32, ReduceOp.SUM, streams[r]);
        }

        /** Every element of rank r's output is the sum over {@code ranks} ranks of (rank + 1) * (i % 1000). */
        void checkSum(int r, int ranks) {
            ByteBuffer b = ByteBuffer.allocateDirect(4 * N).order(ByteOrder.nativeOrder());
            backend.download(b, recv[r].address());
            int factor = ranks * (ranks + 1) / 2;
            for (int i = 0; i < N; i++) {
                assertEquals(factor * (i % 1000), b.getInt(4 * i), "rank " + r + " element " + i);
            }
        }

        @Override
        public void close() {
            for (int r = 0; r < send.length; r++) {
                streams[r].close();
                send[r].close();
                recv[r].close();
            }
        }
    }

    private static void refused(Result result, String text, Executable call) {
        FlexLinkException e = assertThrows(FlexLinkException.class, call);
        assertEquals(result, e.result(), e.getMessage());
        assertTrue(e.getMessage().contains(text), e.getMessage());
    }

    /** Polls like an NCCL program polls a revoked communicator; the revoke's drain bounds it. */
    private static void untilSuccess(Communicator c) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        Result r;
        while ((r = c.getAsyncError()) == Result.IN_PROGRESS) {
            assertTrue(System.nanoTime() < deadline, "the revoke never finished");
            Thread.onSpinWait();
        }
        assertEquals(Result.SUCCESS, r, c.toString());
    }

    @Test
    void finalizeDrainsTheEnqueuedWorkThenOnlyCloseIsAllowed() throws Throwable {
        try (HostBackend backend = new HostBackend(CONFIG)) {
            Communicator[] comms = FlexLink.initAll(backend, CONFIG, 0, 1);
            try (Buffers buf = new Buffers(backend, comms)) {
                FlexLink.groupStart();
                for (int r = 0; r < 2; r++) {
                    buf.allReduce(comms[r], r).execute();
                }
                FlexLink.groupEnd(); // enqueued, not waited for: finalize flushes it
                for (Communicator c : comms) {
                    c.finalizeComm();
                }
                for (int r = 0; r < 2; r++) {
                    buf.streams[r].synchronize();
                    buf.checkSum(r, 2);
                    Communicator c = comms[r];
                    int other = 1 - r;
                    assertEquals(Result.SUCCESS, c.getAsyncError());
                    refused(Result.INVALID_USAGE, "finalized", buf.allReduce(c, r));
                    refused(Result.INVALID_USAGE, "finalized", () -> c.split(0, 0));
                    refused(Result.INVALID_USAGE, "finalized", () -> c.shrink(new int[] {other}));
                    refused(Result.INVALID_USAGE, "finalized", () -> c.shrink(new int[] {other}, true));
                    refused(Result.INVALID_USAGE, "finalized", c::growId);
                    refused(Result.INVALID_ARGUMENT, "finalized already", c::finalizeComm);
                    refused(Result.INVALID_ARGUMENT, "finalized already", c::revoke);
                    c.close();
                    refused(Result.INVALID_USAGE, "closed", c::finalizeComm);
                    refused(Result.INVALID_USAGE, "closed", c::revoke);
                }
            }
            assertEquals(0, backend.liveBytes(), "finalize and close freed everything");
        }
    }

    @Test
    void finalizeInsideAGroupIsRefusedAndChangesNothing() throws Throwable {
        try (HostBackend backend = new HostBackend(CONFIG)) {
            Communicator[] comms = FlexLink.initAll(backend, CONFIG, 0, 1);
            try (Buffers buf = new Buffers(backend, comms)) {
                FlexLink.groupStart();
                refused(Result.INVALID_USAGE, "inside a group", comms[0]::finalizeComm);
                FlexLink.groupEnd();
                FlexLink.groupStart();
                for (int r = 0; r < 2; r++) {
                    buf.allReduce(comms[r], r).execute();
                }
                FlexLink.groupEnd();
                for (int r = 0; r < 2; r++) {
                    buf.streams[r].synchronize();
                    buf.checkSum(r, 2);
                }
            }
            closeAll(comms);
        }
    }

    /** Rank 0 calls an AllReduce that rank 1 never joins: its streams wait until the revoke stops them. */
    @Test
    void revokeReleasesAStuckCallAndLeavesSplitAndClose() throws Throwable {
        try (HostBackend backend = new HostBackend(CONFIG)) {
            Communicator[] comms = FlexLink.initAll(backend, CONFIG, 0, 1, 2);
            try (Buffers buf = new Buffers(backend, comms)) {
                buf.allReduce(comms[0], 0).execute();
                assertEquals(Result.SUCCESS, comms[0].getAsyncError(), "waiting for its peers, not failed");
                comms[0].revoke();
                try {
                    buf.streams[0].synchronize(); // released: the stuck call ended (its data is garbage)
                } catch (FlexLinkException e) {
                    // the host backend fails a released wait's stream (a GPU stream just moves on)
                    assertEquals(Result.REMOTE_ERROR, e.result(), e.getMessage());
                }
                untilSuccess(comms[0]);
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (comms[1].getAsyncError() == Result.SUCCESS) {
                    assertTrue(System.nanoTime() < deadline, "the peers never heard of the revoke");
                    Thread.onSpinWait();
                }
                assertEquals(Result.REMOTE_ERROR, comms[1].getAsyncError(), "a peer sees the revoke as an abort");
                comms[1].revoke(); // the peers revoke too: allowed after their error
                comms[2].revoke();
                for (int r = 0; r < 3; r++) {
                    Communicator c = comms[r];
                    untilSuccess(c);
                    refused(Result.INVALID_USAGE, "revoked", buf.allReduce(c, r));
                    refused(Result.INVALID_ARGUMENT, "revoked already", c::finalizeComm);
                    refused(Result.INVALID_ARGUMENT, "revoked already", c::revoke);
                }
                // a revoked communicator keeps its ranks' rendezvous: its ranks can still make a child
                IntUnaryOperator all = r -> 0;
                Optional<Communicator>[] kids = split(comms, all, r -> -r);
                Communicator[] child = children(kids, all, 0);
                assertEquals(2, child[0].device(), "keys -r reverse the ranks");
                everyCollectiveExact(backend, child, "child of a revoked communicator", 77);
                closeAll(child);
            }
            closeAll(comms);
            assertEquals(0, backend.liveBytes(), "revoke and close freed everything");
        }
    }
}
