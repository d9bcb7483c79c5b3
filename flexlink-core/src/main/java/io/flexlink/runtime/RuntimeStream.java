package io.flexlink.runtime;

import io.flexlink.DataType;
import io.flexlink.ReduceOp;
import io.flexlink.Stream;

/**
 * A stream with the asynchronous operations the engine and the staging protocol enqueue. Every method
 * enqueues and returns; none waits on the host for device work.
 */
public interface RuntimeStream extends Stream {
    /** The stream's role, for logs and link emulation (for example {@code pcie.send}). */
    String label();

    /** Copies {@code bytes} bytes from {@code src} to {@code dst} (device or mapped pinned addresses). */
    void copy(long dst, long src, long bytes);

    /**
     * Copies {@code bytes} bytes from pinned host memory at {@code offset} of {@code mem} to {@code dst}
     * (the receiving side of a staged transfer).
     */
    default void copyFromHost(long dst, PinnedMemory mem, long offset, long bytes) {
        copy(dst, mem.deviceAddress() + offset, bytes);
    }

    /** Waits until the counter at {@code offset} of {@code mem} is at or past {@code value} (wrap-safe, ≥). */
    void waitValue32(PinnedMemory mem, long offset, int value);

    /** Writes {@code value} to the counter at {@code offset} of {@code mem}, after all earlier work of this stream. */
    void writeValue32(PinnedMemory mem, long offset, int value);

    /** Waits until {@code (word & mask) != 0} for the word at {@code offset} of {@code mem} (a flag, see {@link MemOps}). */
    void waitAny(PinnedMemory mem, long offset, int mask);

    /**
     * Enqueues the waits and writes of {@code ops}, in order, as one operation where the backend can
     * ({@code cuStreamBatchMemOp}); {@code ops} may be reused as soon as this returns.
     */
    default void memOps(MemOps ops) {
        for (int i = 0; i < ops.size(); i++) {
            if (ops.kind(i) == MemOps.WAIT) {
                waitAny(ops.memory(i), ops.offset(i), ops.value(i));
            } else if (ops.kind(i) == MemOps.WAIT_AT_LEAST) {
                waitValue32(ops.memory(i), ops.offset(i), ops.value(i));
            } else {
                writeValue32(ops.memory(i), ops.offset(i), ops.value(i));
            }
        }
    }

    /**
     * Copies {@code rows} rows of {@code width} bytes from {@code src} (rows {@code srcPitch} bytes apart)
     * to {@code dst} (rows {@code dstPitch} bytes apart), as one operation where the backend can
     * ({@code cudaMemcpy2DAsync}).
     */
    default void copyRows(long dst, long dstPitch, long src, long srcPitch, long width, long rows) {
        for (long r = 0; r < rows; r++) {
            copy(dst + r * dstPitch, src + r * srcPitch, width);
        }
    }

    /** {@link #copyRows} from pinned host memory at {@code offset} of {@code mem} (the receiving side of staging). */
    default void copyRowsFromHost(long dst, long dstPitch, PinnedMemory mem, long offset, long srcPitch, long width,
                                  long rows) {
        for (long r = 0; r < rows; r++) {
            copyFromHost(dst + r * dstPitch, mem, offset + r * srcPitch, width);
        }
    }

    /**
     * Enqueues {@code runs}, independent copies of rows, as one operation where the backend can (one
     * {@code cudaMemcpy3DBatchAsync} on CUDA); by default each as its own. Never while the stream is being
     * captured: CUDA has no graph node for a batch of copies.
     */
    default void copyRowRuns(RowRuns runs) {
        runs.enqueueEach(this);
    }

    /**
     * The chain of reductions of {@link ReduceChain} over {@code ranks} inputs in one operation where the
     * backend can (one kernel on CUDA): {@code dst = a op row[0] op row[1] ... op row[k-1]}, row {@code t}
     * at {@code rows + t * pitch} ({@code count} elements each), step {@code t} with
     * {@code ReduceChain.op/divisor(op, type, t, ranks)}; {@code k = ranks - 1}. With {@code k = 0} it copies
     * {@code a} to {@code dst}. {@code dst} may equal {@code a}.
     */
    default void reduceRows(long dst, long a, long rows, long pitch, int k, long count, DataType type, ReduceOp op,
                            int ranks) {
        if (k == 0) {
            if (dst != a && count > 0) {
                copy(dst, a, count * type.size());
            }
            return;
        }
        for (int t = 0; t < k; t++) {
            reduce(dst, t == 0 ? a : dst, rows + t * pitch, count, type, ReduceChain.op(op, type, t, ranks),
                    ReduceChain.divisor(op, type, t, ranks));
        }
    }

    /**
     * {@code dst[i] = a[i] op b[i]} for {@code count} elements. For {@link ReduceOp#AVG} on integers the
     * result is {@code (a + b) / divisor}; on floating-point types it divides first, so that no partial
     * sum overflows: {@code a / divisor + b / divisor}, or {@code a + b / |divisor|} for a negative
     * divisor ({@link ReduceChain} says which step uses which). The other operations ignore
     * {@code divisor}. {@code dst} may equal {@code a} or {@code b}.
     */
    void reduce(long dst, long a, long b, long count, DataType type, ReduceOp op, int divisor);

    /**
     * {@code dst[i] = a[i] * scalar} ({@code scalar}: the address of one element of {@code type}, readable
     * by the device when the work runs: NCCL's PreMulSum), or {@code dst[i] = a[i] / divisor} when
     * {@code scalar} is 0 (an average divided before it is summed); rounded once, as {@link #reduce}
     * computes. {@code dst} may equal {@code a}.
     */
    void scale(long dst, long a, long count, DataType type, long scalar, int divisor);

    /**
     * Like {@link #reduce}, with {@code b} in pinned host memory at {@code bOffset} of {@code mem}; a
     * backend may read it in place or copy it to device scratch first.
     */
    void reduceFromHost(long dst, long a, PinnedMemory mem, long bOffset, long count, DataType type,
                        ReduceOp op, int divisor);

    /**
     * True while this stream is being captured into a CUDA graph ({@code cudaStreamBeginCapture}): work
     * enqueued now runs at each replay, and the stream must not be queried. Always false where the backend
     * has no graphs.
     */
    default boolean isCapturing() {
        return false;
    }

    /**
     * Starts capturing this stream's work into a graph (CUDA's global capture mode); where the backend has no
     * graphs, INVALID_USAGE.
     */
    default void beginCapture() {
        throw new io.flexlink.FlexLinkException(io.flexlink.Result.INVALID_USAGE, "stream " + label()
                + ": this backend has no CUDA graphs to capture into");
    }

    /**
     * Tells a capture that {@link #beginCapture} started that {@code user}'s work is in it: the graph refuses
     * to launch once {@code user} is released. Does nothing otherwise (a capture begun outside FlexLink
     * gives FlexLink no graph to guard). Cheap: called on every call.
     */
    default void capturedBy(CaptureUser user) {
    }

    /** Ends the capture {@link #beginCapture} started and instantiates the graph. */
    default RuntimeGraph endCapture() {
        throw new io.flexlink.FlexLinkException(io.flexlink.Result.INVALID_USAGE, "stream " + label()
                + ": this backend has no CUDA graphs to capture into");
    }

    /** The first failure of work on this stream, or null; never blocks. */
    io.flexlink.FlexLinkException failure();

    /**
     * A health check's poll on behalf of this stream's fault domain ({@link #faultDomain()}): asks the device for
     * faults where that is allowed and due, and returns whether this stream stood for its domain, not whether it
     * failed; what it found is then {@link #knownFailure()} (so {@link #failure()} must keep what it finds). False
     * for a stream that must not be asked (one being captured: a query would invalidate the application's graph;
     * and one that cannot answer, such as a closed CUDA stream): the check then asks the domain's next stream. A backend that paces its queries may answer
     * from its last due poll without asking anything, the capture state included; its answer then describes the
     * stream as that poll found it. A wrapper that changes {@link #isCapturing()} must change this too.
     */
    default boolean pollForDomain() {
        if (isCapturing()) {
            return false;
        }
        failure();
        return true;
    }

    /**
     * What this stream's faults are shared with: when work of one stream of a domain faults, {@link #failure()} of
     * any of them finds it. A health check polls one stream per domain ({@link #pollForDomain()}) and reads
     * {@link #knownFailure()} of every stream. CUDA's faults of finished work are the context's (a fault poisons every stream of the device); by
     * default a stream is a domain of its own.
     */
    default Object faultDomain() {
        return this;
    }

    /**
     * The failure this stream already knows of (a rejected operation, a failure found before), or null, without
     * asking the device: no query and no clock read, for the checks between two polls.
     */
    default io.flexlink.FlexLinkException knownFailure() {
        return failure();
    }

    /** Records {@code event} at the current end of this stream. */
    void record(RuntimeEvent event);

    /** Makes later work of this stream wait for the most recent record of {@code event}. */
    void waitEvent(RuntimeEvent event);
}
