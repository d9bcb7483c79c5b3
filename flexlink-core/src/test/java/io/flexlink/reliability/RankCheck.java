package io.flexlink.reliability;

import io.flexlink.Collective;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.ReduceOp;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
import io.flexlink.testing.Bounded;
import io.flexlink.verify.DataPattern;
import io.flexlink.verify.Expected;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;

/**
 * One rank driven by its own thread: its own stream and buffers, its input from {@link DataPattern}, its
 * output checked against {@link Expected} (so a thread checks its rank without seeing the others).
 */
final class RankCheck implements AutoCloseable {
    private static final Duration BOUND = Duration.ofSeconds(30);

    private final HostBackend backend;
    private Communicator comm;
    private final int rank;
    private final int size;
    final RuntimeStream stream;
    private final DeviceMemory send;
    private final DeviceMemory recv;

    RankCheck(HostBackend backend, Communicator comm, String label, long maxCount) {
        this.backend = backend;
        this.comm = comm;
        this.rank = comm.rank();
        this.size = comm.size();
        this.stream = backend.createStream(comm.device(), label);
        this.send = backend.allocate(comm.device(), maxCount * 8 * size);
        this.recv = backend.allocate(comm.device(), maxCount * 8 * size);
    }

    /** Uses {@code next} (same rank and size) from now on. */
    void rebind(Communicator next) {
        comm = next;
    }

    /** Runs {@code c} on every rank of {@code ranks} (enqueued by this thread), and counts the wrong elements. */
    static long runAll(RankCheck[] ranks, Collective c, DataType type, ReduceOp op, long count, int root, long seed) {
        for (RankCheck r : ranks) {
            r.prepare(c, type, op, count, root, seed);
        }
        for (RankCheck r : ranks) {
            r.enqueue(c, type, op, count, root);
        }
        long wrong = 0;
        for (RankCheck r : ranks) {
            wrong += r.check(c, type, op, count, root, seed);
        }
        return wrong;
    }

    /** Runs {@code c} on this rank, waits (bounded) and returns the number of wrong output elements. */
    long run(Collective c, DataType type, ReduceOp op, long count, int root, long seed) {
        prepare(c, type, op, count, root, seed);
        enqueue(c, type, op, count, root);
        return check(c, type, op, count, root, seed);
    }

    private ByteBuffer host = ByteBuffer.allocateDirect(0);

    private ByteBuffer host(long bytes) {
        if (host.capacity() < bytes) {
            host = ByteBuffer.allocateDirect((int) bytes).order(ByteOrder.nativeOrder());
        }
        host.clear().limit((int) bytes);
        return host;
    }

    private void prepare(Collective c, DataType type, ReduceOp op, long count, int root, long seed) {
        int sz = type.size();
        long in = Expected.inputCount(c, count, size);
        long out = Expected.outputCount(c, count, size);
        ByteBuffer b = host(out * sz);
        for (long i = 0; i < out; i++) {
            DataPattern.put(b, type, ~Expected.output(c, type, op, seed, size, rank, root, count, i));
        }
        b.flip();
        backend.upload(recv.address(), b);
        b = host(in * sz);
        DataPattern.fill(b, type, DataPattern.dataOp(c, op), seed, size, rank, 0, in);
        backend.upload(send.address(), b);
    }

    private void enqueue(Collective c, DataType type, ReduceOp op, long count, int root) {
        io.flexlink.testing.CollectiveHarness.enqueue(c, comm, send.address(), recv.address(), count, type, op, root,
                stream);
    }

    private long check(Collective c, DataType type, ReduceOp op, long count, int root, long seed) {
        Bounded.idle(stream, BOUND);
        stream.synchronize();
        if (c == Collective.REDUCE && rank != root) {
            return 0;
        }
        int sz = type.size();
        long out = Expected.outputCount(c, count, size);
        ByteBuffer b = host(out * sz);
        backend.download(b, recv.address());
        long wrong = 0;
        for (long i = 0; i < out; i++) {
            long want = Expected.output(c, type, op, seed, size, rank, root, count, i) & DataPattern.mask(type);
            wrong += DataPattern.get(b, type, i) == want ? 0 : 1;
        }
        return wrong;
    }

    @Override
    public void close() {
        Bounded.idle(stream, BOUND);
        stream.close();
        send.close();
        recv.close();
    }
}
