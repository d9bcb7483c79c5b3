package io.flexlink.cuda;

import io.flexlink.DataType;
import io.flexlink.FlexLinkException;
import io.flexlink.ReduceOp;
import io.flexlink.Result;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.bytedeco.cuda.cudart.CUfunc_st;
import org.bytedeco.cuda.global.cudart;

/**
 * The elementwise reduction kernels of {@code reduce.cu} on each device: compiled by NVRTC for the
 * device's architecture (cached on disk), loaded once per device, one {@link CUfunc_st} per
 * (type, op) looked up at load so that a launch is two array reads.
 */
final class ReduceKernels implements AutoCloseable {
    static final String RESOURCE = "/io/flexlink/cuda/reduce.cu";
    /** Threads per block; each thread handles 16-byte vectors in a grid-stride loop. */
    static final int BLOCK = 256;
    /** Resident blocks per SM at full occupancy (2048 threads / SM on Volta..Hopper). */
    static final int BLOCKS_PER_SM = 8;

    /** The kernels of one device. */
    static final class Device {
        final CudaModule module;
        final CUfunc_st[][] functions;
        /** The chain kernels (flexlink_rows_*), per (type, op). */
        final CUfunc_st[][] rowFunctions;
        /** The scaling kernels (flexlink_scale_*), per type. */
        final CUfunc_st[] scaleFunctions;
        final int maxGrid;

        Device(CudaModule module, CUfunc_st[][] functions, CUfunc_st[][] rowFunctions, CUfunc_st[] scaleFunctions,
               int maxGrid) {
            this.module = module;
            this.functions = functions;
            this.rowFunctions = rowFunctions;
            this.scaleFunctions = scaleFunctions;
            this.maxGrid = maxGrid;
        }

        /** Blocks for {@code count} elements of {@code elementSize} bytes: enough for one vector per thread, capped. */
        int grid(long count, int elementSize) {
            long perVector = 16 / elementSize;
            long vectors = (count + perVector - 1) / perVector;
            long blocks = (vectors + BLOCK - 1) / BLOCK;
            return (int) Math.max(1, Math.min(blocks, maxGrid));
        }
    }

    private final KernelCompiler compiler;
    private final Device[] devices;

    ReduceKernels(KernelCompiler compiler, int deviceCount) {
        this.compiler = compiler;
        this.devices = new Device[deviceCount];
    }

    /** The kernels of {@code device}, loading them on first use (init path: streams trigger it). */
    Device forDevice(int device) {
        Device d = devices[device];
        if (d == null) {
            d = load(device);
        }
        return d;
    }

    private synchronized Device load(int device) {
        Device d = devices[device];
        if (d != null) {
            return d;
        }
        CudaModule module = compiler.load(device, RESOURCE, source(), List.of("-std=c++17"));
        try {
            DataType[] types = DataType.values();
            ReduceOp[] ops = ReduceOp.values();
            CUfunc_st[][] fns = new CUfunc_st[types.length][ops.length];
            CUfunc_st[][] rows = new CUfunc_st[types.length][ops.length];
            CUfunc_st[] scales = new CUfunc_st[types.length];
            for (DataType t : types) {
                scales[t.ordinal()] = module.function(functionName(SCALE, t, null));
                for (ReduceOp o : ops) {
                    fns[t.ordinal()][o.ordinal()] = module.function(functionName(REDUCE, t, o));
                    rows[t.ordinal()][o.ordinal()] = module.function(functionName(ROWS, t, o));
                }
            }
            int[] sms = new int[1];
            CudaCheck.rt(cudart.cudaDeviceGetAttribute(sms, cudart.cudaDevAttrMultiProcessorCount, device),
                    "cudaDeviceGetAttribute(MultiProcessorCount, " + device + ")");
            d = new Device(module, fns, rows, scales, Math.max(1, sms[0]) * BLOCKS_PER_SM);
        } catch (RuntimeException | Error e) {
            module.close(); // a module that will never be used is not kept loaded
            throw e;
        }
        devices[device] = d;
        return d;
    }

    private static String source() {
        try (InputStream in = ReduceKernels.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new FlexLinkException(Result.INTERNAL_ERROR, "kernel source not on the classpath: " + RESOURCE);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new FlexLinkException(Result.INTERNAL_ERROR, "cannot read " + RESOURCE + ": " + e, e);
        }
    }

    /** The kernels' name prefixes: reduce.cu's {@code flexlink_<kind>_<type>[_<op>]}. */
    static final String REDUCE = "reduce";
    /** The whole chain of one owner's reduction in one kernel. */
    static final String ROWS = "rows";
    /** A PreMulSum's multiplication, or a pre-scaled average's division (no op in the name). */
    static final String SCALE = "scale";

    /**
     * {@code flexlink_<kind>_<type>_<op>}, e.g. {@code flexlink_reduce_bfloat16_sum}; without {@code _<op>} when
     * {@code o} is null.
     */
    static String functionName(String kind, DataType t, ReduceOp o) {
        return "flexlink_" + kind + "_" + t.name().toLowerCase(Locale.ROOT)
                + (o == null ? "" : "_" + o.name().toLowerCase(Locale.ROOT));
    }

    @Override
    public synchronized void close() {
        List<CudaModule> modules = new ArrayList<>();
        for (int i = 0; i < devices.length; i++) {
            if (devices[i] != null) {
                modules.add(devices[i].module);
                devices[i] = null;
            }
        }
        for (CudaModule m : modules) {
            m.close();
        }
    }
}
