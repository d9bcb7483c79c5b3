package io.flexlink.cuda;

import static io.flexlink.runtime.NativeMemory.UNSAFE;

import io.flexlink.runtime.MemOps;
import org.bytedeco.cuda.cudart.CUstreamBatchMemOpParams_v1;
import org.bytedeco.cuda.cudart.CUstream_st;
import org.bytedeco.cuda.global.cudart;

/**
 * A {@link CudaStream}'s batches of flag operations (waits and writes of 32-bit words in mapped pinned
 * memory), each enqueued with one {@code cuStreamBatchMemOp} per 255 operations. The parameter array is
 * reused and grows only for a batch larger than any before (never in a steady state); a rejected batch
 * becomes the stream's failure ({@link StreamStatus}).
 */
final class BatchMemOps implements AutoCloseable {
    /** Bytes of one {@code CUstreamBatchMemOpParams} (a union of 48 bytes in every CUDA version that has it). */
    private static final int MEMOP_BYTES = 48;
    /** cuStreamBatchMemOp takes fewer than 256 operations per call. */
    private static final int MEMOP_MAX = 255;

    private final StreamStatus status;
    private final CUstream_st handle;
    /** The parameter array of {@link #enqueue}, grown on demand (never in a steady state). */
    private CUstreamBatchMemOpParams_v1 memOpParams = new CUstreamBatchMemOpParams_v1(16);
    private int memOpCapacity = 16;

    BatchMemOps(StreamStatus status, CUstream_st handle) {
        this.status = status;
        this.handle = handle;
    }

    /** Enqueues {@code ops} in order; the stream has checked that it is open. */
    void enqueue(MemOps ops) {
        int n = ops.size();
        for (int from = 0; from < n; from += MEMOP_MAX) {
            int k = Math.min(MEMOP_MAX, n - from);
            if (k > memOpCapacity) {
                memOpParams.close();
                memOpCapacity = Math.max(k, 2 * memOpCapacity);
                memOpParams = new CUstreamBatchMemOpParams_v1(memOpCapacity);
            }
            long base = memOpParams.address();
            UNSAFE.setMemory(base, (long) k * MEMOP_BYTES, (byte) 0);
            for (int i = 0; i < k; i++) {
                int j = from + i;
                long p = base + (long) i * MEMOP_BYTES;
                byte kind = ops.kind(j);
                boolean wait = kind != MemOps.WRITE;
                // both parameter structs: operation (4 bytes, padded), address, value (union), flags, alias
                UNSAFE.putInt(p, wait ? cudart.CU_STREAM_MEM_OP_WAIT_VALUE_32 : cudart.CU_STREAM_MEM_OP_WRITE_VALUE_32);
                UNSAFE.putLong(p + 8, ops.memory(j).deviceAddress() + ops.offset(j));
                UNSAFE.putInt(p + 16, ops.value(j));
                UNSAFE.putInt(p + 24, kind == MemOps.WAIT ? cudart.CU_STREAM_WAIT_VALUE_AND
                        : kind == MemOps.WAIT_AT_LEAST ? cudart.CU_STREAM_WAIT_VALUE_GEQ
                        : cudart.CU_STREAM_WRITE_VALUE_DEFAULT);
            }
            int rc = cudart.cuStreamBatchMemOp(handle, k, memOpParams, 0);
            if (rc != 0) {
                throw status.fail(rc, "cuStreamBatchMemOp(" + k + " operations)", true);
            }
        }
    }

    @Override
    public void close() {
        memOpParams.close();
    }
}
