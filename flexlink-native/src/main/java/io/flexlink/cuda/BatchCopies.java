package io.flexlink.cuda;

import static io.flexlink.runtime.NativeMemory.UNSAFE;

import io.flexlink.runtime.RowRuns;
import org.bytedeco.cuda.cudart.CUstream_st;
import org.bytedeco.cuda.cudart.cudaMemcpy3DBatchOp;
import org.bytedeco.cuda.global.cudart;
import org.bytedeco.javacpp.Pointer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link CudaStream}'s batches of copies of rows: the runs of a {@link RowRuns}, each a 2D copy, enqueued with
 * one {@code cudaMemcpy3DBatchAsync} (CUDA 12.8 and later) instead of one {@code cudaMemcpy2DAsync} each: a staged
 * item's pieces on either side of its producer, or a consumer's rows from the producers on either side of it, are
 * two runs, and each enqueue costs the host microseconds. The operations are written straight into the parameter
 * array, reused and grown only for more runs than before, at offsets checked once against the presets' own
 * accessors ({@link #LAYOUT}): where they disagree, nothing is batched. CUDA has no graph node for such a batch, so
 * the caller never hands over the runs of a captured call ({@link io.flexlink.sync.Lane#batchRuns}).
 */
final class BatchCopies implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(BatchCopies.class);
    /** {@code cudaMemcpy3DBatchOp}: two operands of 40 bytes, the extent (three sizes), the access order, flags. */
    private static final int OP_BYTES = 112;
    private static final int SRC = 0;
    private static final int DST = 40;
    /** In an operand: its type (4 bytes, padded), then the pointer, row length, layer height and location hint. */
    private static final int PTR = 8;
    private static final int ROW_LENGTH = 16;
    private static final int LAYER_HEIGHT = 24;
    private static final int EXTENT = 80;
    private static final int ORDER = 104;
    private static final int FLAGS = 108;
    /** Whether the offsets above are those of the CUDA headers the presets were built with. */
    static final boolean LAYOUT = layoutMatches();

    /**
     * Set once CUDA refused a batch as such (not supported, not permitted, an argument it does not take) rather
     * than a fault of earlier work: from then on every run goes as its own copy, which does the same work.
     */
    private static volatile boolean refused;

    private final StreamStatus status;
    private final CUstream_st handle;
    private final int device;
    private cudaMemcpy3DBatchOp ops;
    private int capacity;

    BatchCopies(StreamStatus status, CUstream_st handle, int device) {
        this.status = status;
        this.handle = handle;
        this.device = device;
    }

    /** cudaMemcpy2DAsync refuses pitches at or above this (cudaDeviceProp.memPitch on current GPUs). */
    private static final long MAX_PITCH = Integer.MAX_VALUE;

    /** Whether a 2D copy, or a run of a batch, can express rows of {@code width} bytes at these pitches. */
    static boolean pitchable(long dstPitch, long srcPitch, long width) {
        return dstPitch >= width && srcPitch >= width && dstPitch < MAX_PITCH && srcPitch < MAX_PITCH;
    }

    /**
     * Enqueues {@code runs} as one batch; false (nothing enqueued) where it cannot: the layout check failed, CUDA
     * refused a batch before, or a run has rows closer than their width, which a 2D copy cannot express either.
     */
    boolean enqueue(RowRuns runs) {
        int n = runs.size();
        if (!LAYOUT || refused) {
            return false;
        }
        for (int i = 0; i < n; i++) {
            if (runs.rows(i) > 1 && !pitchable(runs.dstPitch(i), runs.srcPitch(i), runs.width(i))) {
                return false;
            }
        }
        if (n > capacity) {
            int grown = Math.max(n, 2 * capacity);
            cudaMemcpy3DBatchOp bigger = new cudaMemcpy3DBatchOp(grown); // before the old one goes: it may throw
            if (ops != null) {
                ops.close();
            }
            ops = bigger;
            capacity = grown;
        }
        long base = ops.address();
        UNSAFE.setMemory(base, (long) n * OP_BYTES, (byte) 0);
        for (int i = 0; i < n; i++) {
            long p = base + (long) i * OP_BYTES;
            long w = runs.width(i);
            long rows = runs.rows(i);
            // a single row's pitch says nothing (a 2D copy ignores it): the row's own width stands in for it
            operand(p + SRC, runs.deviceSrc(i), rows > 1 ? runs.srcPitch(i) : w, rows);
            operand(p + DST, runs.dst(i), rows > 1 ? runs.dstPitch(i) : w, rows);
            UNSAFE.putLong(p + EXTENT, w);
            UNSAFE.putLong(p + EXTENT + 8, rows);
            UNSAFE.putLong(p + EXTENT + 16, 1);
            UNSAFE.putInt(p + ORDER, cudart.cudaMemcpySrcAccessOrderStream);
            UNSAFE.putInt(p + FLAGS, cudart.cudaMemcpyFlagDefault);
        }
        // as a kernel launch: made on the stream's device whatever thread enqueues it, and the caller's current
        // device given back afterwards (NCCL leaves it alone; one thread may drive every GPU of the machine)
        int previous = Devices.enter(device);
        int rc;
        try {
            rc = cudart.cudaMemcpy3DBatchAsync(n, ops, 0, handle);
        } finally {
            Devices.exit(previous);
        }
        if (rc == cudart.cudaErrorNotSupported || rc == cudart.cudaErrorNotPermitted
                || rc == cudart.cudaErrorInvalidValue) {
            // refused before anything was enqueued: the copies one by one do the same, and say so if they fail.
            // The refusal is also the runtime's last error, which the application's next cudaGetLastError would
            // take for its own: read it away (refusals are not sticky errors, so nothing else is lost)
            cudart.cudaGetLastError();
            refused = true;
            LOG.debug("PATH cudaMemcpy3DBatchAsync refused ({}): copies are not batched from now on",
                    CudaLibraries.cudaError(rc));
            return false;
        }
        if (rc != 0) {
            throw status.fail(rc, "cudaMemcpy3DBatchAsync(" + n + " copies)", false);
        }
        return true;
    }

    /** A pointer operand: bytes are its elements, so the row length is the pitch and the layer height the rows. */
    private static void operand(long q, long ptr, long pitch, long rows) {
        UNSAFE.putInt(q, cudart.cudaMemcpyOperandTypePointer);
        UNSAFE.putLong(q + PTR, ptr);
        UNSAFE.putLong(q + ROW_LENGTH, pitch);
        UNSAFE.putLong(q + LAYER_HEIGHT, rows);
    }

    /** One operation set through the presets' accessors, read back at this class's offsets. */
    private static boolean layoutMatches() {
        try (cudaMemcpy3DBatchOp op = new cudaMemcpy3DBatchOp(1)) {
            long size = Pointer.sizeof(cudaMemcpy3DBatchOp.class);
            long a = op.address();
            UNSAFE.setMemory(a, size, (byte) 0); // the presets' size: the check below refuses any other
            op.src().type(cudart.cudaMemcpyOperandTypePointer).op_ptr_ptr(new RawPointer().set(0x1111_0000L))
                    .op_ptr_rowLength(0x2222).op_ptr_layerHeight(0x3333);
            op.dst().type(cudart.cudaMemcpyOperandTypePointer).op_ptr_ptr(new RawPointer().set(0x4444_0000L))
                    .op_ptr_rowLength(0x5555).op_ptr_layerHeight(0x6666);
            op.extent().width(0x7777).height(0x8888).depth(0x9999);
            op.srcAccessOrder(cudart.cudaMemcpySrcAccessOrderStream).flags(0x0abc);
            boolean ok = size == OP_BYTES
                    && UNSAFE.getInt(a + SRC) == cudart.cudaMemcpyOperandTypePointer
                    && UNSAFE.getLong(a + SRC + PTR) == 0x1111_0000L
                    && UNSAFE.getLong(a + SRC + ROW_LENGTH) == 0x2222
                    && UNSAFE.getLong(a + SRC + LAYER_HEIGHT) == 0x3333
                    && UNSAFE.getInt(a + DST) == cudart.cudaMemcpyOperandTypePointer
                    && UNSAFE.getLong(a + DST + PTR) == 0x4444_0000L
                    && UNSAFE.getLong(a + DST + ROW_LENGTH) == 0x5555
                    && UNSAFE.getLong(a + DST + LAYER_HEIGHT) == 0x6666
                    && UNSAFE.getLong(a + EXTENT) == 0x7777
                    && UNSAFE.getLong(a + EXTENT + 8) == 0x8888
                    && UNSAFE.getLong(a + EXTENT + 16) == 0x9999
                    && UNSAFE.getInt(a + ORDER) == cudart.cudaMemcpySrcAccessOrderStream
                    && UNSAFE.getInt(a + FLAGS) == 0x0abc;
            if (!ok) {
                LOG.debug("INIT cudaMemcpy3DBatchOp is laid out unlike CUDA 13's ({} bytes): copies are not batched",
                        size);
            }
            return ok;
        } catch (RuntimeException | LinkageError e) {
            LOG.debug("INIT cudaMemcpy3DBatchOp: {}: copies are not batched", e.toString());
            return false;
        }
    }

    @Override
    public void close() {
        if (ops != null) {
            ops.close();
        }
    }
}
