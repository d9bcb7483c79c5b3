package io.flexlink.runtime.host;

import static io.flexlink.runtime.NativeMemory.UNSAFE;

import io.flexlink.DataType;
import io.flexlink.FlexLinkException;
import io.flexlink.ReduceOp;
import io.flexlink.Result;
import io.flexlink.runtime.PinnedMemory;
import io.flexlink.runtime.RuntimeEvent;
import io.flexlink.runtime.RuntimeStream;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A stream of the host backend: one worker thread runs the enqueued operations in order. A blocked
 * wait blocks this stream only, as on a GPU. After an operation fails, later copies, reductions and
 * waits are skipped but event records (and other {@link Always} operations) still complete, so that
 * streams joined to this one are not stuck; {@link #synchronize()} then reports the failure, and the
 * stream stays failed (make a new one), like a CUDA stream after a sticky error.
 *
 * <p>A failure travels along events: a record made after the stream failed marks the event failed, and
 * a stream waiting on it fails too (with the same result), as work downstream of a failed kernel would.
 * A wait on a counter of an aborted staging area (its abort word set by any rank, in any process) is
 * cancelled and fails with REMOTE_ERROR; so is any wait of a stream being closed (INVALID_USAGE).
 */
final class HostStream implements RuntimeStream {
    /** One enqueued operation. */
    interface Op {
        void run() throws Exception;
    }

    /** An operation that runs even after the stream failed (bookkeeping that touches no memory). */
    interface Always extends Op {
    }

    /** Wakes the worker at close; not an operation (never counted). */
    private static final Op WAKE = () -> { };

    private final HostBackend backend;
    private final int device;
    private final String label;
    private final LinkedBlockingQueue<Op> queue = new LinkedBlockingQueue<>();
    private final AtomicLong enqueued = new AtomicLong();
    private volatile long completed;
    private final ReentrantLock idleLock = new ReentrantLock();
    private final Condition idle = idleLock.newCondition();
    private volatile Throwable error;
    private volatile boolean closed;
    private final java.util.Map<String, LinkPacer> pacers = new java.util.concurrent.ConcurrentHashMap<>();
    private final Thread worker;

    HostStream(HostBackend backend, int device, String label) {
        this.backend = backend;
        this.device = device;
        this.label = label;
        this.worker = new Thread(this::work, "flexlink-host-stream-" + device + "-" + label);
        this.worker.setDaemon(true);
        this.worker.start();
    }

    @Override
    public int device() {
        return device;
    }

    @Override
    public String label() {
        return label;
    }

    HostBackend backend() {
        return backend;
    }

    /** The pacer of this stream's inbound transfers from memory of {@code purpose}, or null. */
    private LinkPacer pacer(PinnedMemory mem) {
        String purpose = ((HostPinnedMemory) mem).purpose();
        return purpose == null ? null : pacers.computeIfAbsent(purpose, p -> new LinkPacer(backend, p));
    }

    /** Enqueues one operation of kind {@code kind}, passing it through the backend's fault hook. */
    private void enqueue(HostFaults.Op kind, Op op) {
        HostFaults faults = backend.faults();
        if (faults == null) {
            enqueue(op);
        } else {
            enqueue(() -> {
                HostFaults.Action a = faults.before(device, label, kind);
                if (closed) {
                    // the hook held this operation until the stream was closed: its memory may be gone
                    throw new FlexLinkException(Result.INVALID_USAGE, "stream " + label + " closed during a "
                            + kind + " held by a fault hook");
                }
                if (a == HostFaults.Action.RUN) {
                    op.run();
                }
            });
        }
    }

    private void checkOpen() {
        if (closed) {
            throw new FlexLinkException(Result.INVALID_USAGE, "stream: used after close (" + label + ")");
        }
    }

    /** Enqueues one operation. */
    void enqueue(Op op) {
        checkOpen();
        enqueued.incrementAndGet();
        queue.add(op);
    }

    private void work() {
        while (true) {
            Op op;
            try {
                op = queue.poll(100, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                op = null;
            }
            if (op == null || op == WAKE) {
                if (closed && queue.isEmpty()) {
                    return;
                }
                continue;
            }
            try {
                if (error == null || op instanceof Always) {
                    op.run();
                }
            } catch (Throwable t) {
                if (error == null) {
                    error = t;
                }
            }
            completed++;
            if (completed == enqueued.get()) {
                idleLock.lock();
                try {
                    idle.signalAll();
                } finally {
                    idleLock.unlock();
                }
            }
        }
    }

    @Override
    public FlexLinkException failure() {
        Throwable e = error;
        if (e == null) {
            return null;
        }
        return e instanceof FlexLinkException ? (FlexLinkException) e
                : new FlexLinkException(Result.INTERNAL_ERROR, "stream " + label + " failed: " + e, e);
    }

    @Override
    public boolean isIdle() {
        return completed == enqueued.get();
    }

    @Override
    public void synchronize() {
        long target = enqueued.get();
        if (completed < target) {
            idleLock.lock();
            try {
                while (completed < target) {
                    idle.awaitNanos(TimeUnit.MILLISECONDS.toNanos(10));
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new FlexLinkException(Result.SYSTEM_ERROR, "stream: synchronize interrupted");
            } finally {
                idleLock.unlock();
            }
        }
        Throwable e = error;
        if (e != null) {
            if (e instanceof FlexLinkException) {
                FlexLinkException f = (FlexLinkException) e;
                throw new FlexLinkException(f.result(), "stream " + label + " failed: " + f.detail(), f);
            }
            throw new FlexLinkException(Result.INTERNAL_ERROR, "stream " + label + " failed: " + e, e);
        }
    }

    // Every operation checks its memory when enqueued: an address outside the backend's live allocations
    // would crash the process when the worker touches it, so it is refused here (INVALID_ARGUMENT).

    @Override
    public void copy(long dst, long src, long bytes) {
        backend.checkAccess("copy: dst", dst, bytes, LiveRanges.ANY_DEVICE);
        backend.checkAccess("copy: src", src, bytes, LiveRanges.ANY_DEVICE);
        enqueue(HostFaults.Op.COPY, () -> UNSAFE.copyMemory(src, dst, bytes));
    }

    @Override
    public void copyFromHost(long dst, PinnedMemory mem, long offset, long bytes) {
        StreamArguments.within(backend, "copyFromHost", mem, offset, bytes);
        backend.checkAccess("copyFromHost: dst", dst, bytes, LiveRanges.ANY_DEVICE);
        long src = mem.deviceAddress() + offset;
        LinkPacer pacer = pacer(mem);
        enqueue(HostFaults.Op.COPY, () -> {
            long start = System.nanoTime();
            UNSAFE.copyMemory(src, dst, bytes);
            if (pacer != null) {
                pacer.paced(start, bytes);
            }
        });
    }

    @Override
    public void waitValue32(PinnedMemory mem, long offset, int value) {
        HostPinnedMemory m = StreamArguments.counter(backend, "waitValue32", mem, offset);
        long address = m.hostAddress() + offset;
        enqueue(HostFaults.Op.WAIT, () -> awaitCounter(m, address, offset, value));
    }

    @Override
    public void waitAny(PinnedMemory mem, long offset, int mask) {
        HostPinnedMemory m = (HostPinnedMemory) mem;
        long address = m.hostAddress() + offset;
        enqueue(HostFaults.Op.WAIT, () -> awaitFlag(m, address, offset, mask));
    }

    /** Waits (on the stream's thread) until the counter reaches {@code value}; a cancelled wait throws. */
    private void awaitCounter(HostPinnedMemory m, long address, long offset, int value) {
        // after an abort a wait fails even where the released counter satisfies it: fail fast, no garbage
        if (!CounterSignal.await(address, value, () -> closed || m.isAborted()) || m.isAborted()) {
            throw cancelled(m, "wait on counter at +" + offset + " for " + Integer.toUnsignedString(value));
        }
    }

    /** Waits (on the stream's thread) until the flag has a bit of {@code mask}; a cancelled wait throws. */
    private void awaitFlag(HostPinnedMemory m, long address, long offset, int mask) {
        if (!CounterSignal.awaitAny(address, mask, () -> closed || m.isAborted()) || m.isAborted()) {
            throw cancelled(m, "wait on flag at +" + offset + " for mask " + mask);
        }
    }

    private static FlexLinkException cancelled(HostPinnedMemory m, String what) {
        return new FlexLinkException(m.isAborted() ? Result.REMOTE_ERROR : Result.INVALID_USAGE,
                what + " cancelled (communicator aborted or stream closed)");
    }

    /** The whole batch as one operation of this stream, in order (a copy of it: the batch is reused). */
    @Override
    public void memOps(io.flexlink.runtime.MemOps ops) {
        int n = ops.size();
        byte[] kinds = new byte[n];
        HostPinnedMemory[] mems = new HostPinnedMemory[n];
        long[] offsets = new long[n];
        int[] values = new int[n];
        for (int i = 0; i < n; i++) {
            kinds[i] = ops.kind(i);
            mems[i] = (HostPinnedMemory) ops.memory(i);
            offsets[i] = ops.offset(i);
            values[i] = ops.value(i);
        }
        boolean writes = false;
        for (int i = 0; i < n; i++) {
            writes |= kinds[i] == io.flexlink.runtime.MemOps.WRITE;
        }
        // a fault hook sees a batch with a write as a write (dropping it loses the write), else as a wait
        enqueue(writes ? HostFaults.Op.WRITE : HostFaults.Op.WAIT, () -> {
            for (int i = 0; i < n; i++) {
                HostPinnedMemory m = mems[i];
                long address = m.hostAddress() + offsets[i];
                if (kinds[i] == io.flexlink.runtime.MemOps.WAIT_AT_LEAST) {
                    awaitCounter(m, address, offsets[i], values[i]);
                } else if (kinds[i] != io.flexlink.runtime.MemOps.WRITE) {
                    awaitFlag(m, address, offsets[i], values[i]);
                } else {
                    UNSAFE.putIntVolatile(null, address, values[i]);
                    CounterSignal.signal(address);
                }
            }
        });
    }

    @Override
    public void writeValue32(PinnedMemory mem, long offset, int value) {
        long address = StreamArguments.counter(backend, "writeValue32", mem, offset).hostAddress() + offset;
        enqueue(HostFaults.Op.WRITE, () -> {
            UNSAFE.putIntVolatile(null, address, value);
            CounterSignal.signal(address);
        });
    }

    @Override
    public void reduce(long dst, long a, long b, long count, DataType type, ReduceOp op, int divisor) {
        long bytes = StreamArguments.reduceBytes("reduce", count, type, op, divisor);
        backend.checkAccess("reduce: dst", dst, bytes, LiveRanges.ANY_DEVICE);
        backend.checkAccess("reduce: a", a, bytes, LiveRanges.ANY_DEVICE);
        backend.checkAccess("reduce: b", b, bytes, LiveRanges.ANY_DEVICE);
        enqueue(HostFaults.Op.REDUCE, () -> HostReduce.reduce(dst, a, b, count, type, op, divisor));
    }

    @Override
    public void scale(long dst, long a, long count, DataType type, long scalar, int divisor) {
        enqueue(HostFaults.Op.REDUCE, () -> HostScale.scale(dst, a, count, type, scalar, divisor));
    }

    @Override
    public void reduceFromHost(long dst, long a, PinnedMemory mem, long bOffset, long count, DataType type,
                               ReduceOp op, int divisor) {
        long bytes = StreamArguments.reduceBytes("reduceFromHost", count, type, op, divisor);
        StreamArguments.within(backend, "reduceFromHost", mem, bOffset, bytes);
        backend.checkAccess("reduceFromHost: dst", dst, bytes, LiveRanges.ANY_DEVICE);
        backend.checkAccess("reduceFromHost: a", a, bytes, LiveRanges.ANY_DEVICE);
        long b = mem.deviceAddress() + bOffset;
        LinkPacer pacer = pacer(mem);
        enqueue(HostFaults.Op.REDUCE, () -> {
            long start = System.nanoTime();
            HostReduce.reduce(dst, a, b, count, type, op, divisor);
            if (pacer != null) {
                pacer.paced(start, count * type.size());
            }
        });
    }

    @Override
    public void record(RuntimeEvent event) {
        HostEvent e = HostEvent.of("record", event);
        checkOpen(); // before the event counts a record: a refused one must not leave it waiting forever
        long seq = e.nextRecord();
        enqueue(new RecordOp(this, e, seq));
    }

    @Override
    public void waitEvent(RuntimeEvent event) {
        HostEvent e = HostEvent.of("waitEvent", event);
        long target = e.lastRecord();
        enqueue(HostFaults.Op.WAIT_EVENT, () -> {
            e.await(target, () -> closed);
            FlexLinkException f = e.failure();
            if (f != null) {
                throw new FlexLinkException(f.result(), "stream " + label + " waited on an event recorded after "
                        + "its stream failed: " + f.detail(), f);
            }
        });
    }

    /** Operations enqueued so far (tests check that a rejected call enqueued nothing). */
    long enqueuedCount() {
        return enqueued.get();
    }

    /** Operations finished (run, failed or skipped) so far. */
    long completedCount() {
        return completed;
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            queue.add(WAKE); // the worker leaves at once when nothing is left
            backend.streamClosed(this);
        }
    }

    @Override
    public String toString() {
        return "HostStream[" + label + ", device " + device + "]";
    }

    /**
     * An event record: always runs, even after a failure, so that joined streams move on; a record of a
     * failed stream carries the failure to the streams that wait on the event.
     */
    private static final class RecordOp implements Always {
        private final HostStream stream;
        private final HostEvent event;
        private final long seq;

        RecordOp(HostStream stream, HostEvent event, long seq) {
            this.stream = stream;
            this.event = event;
            this.seq = seq;
        }

        @Override
        public void run() {
            event.complete(seq, stream.error == null ? null : stream.failure());
        }
    }
}
