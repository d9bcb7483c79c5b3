package io.flexlink.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.flexlink.Collective;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.ReduceOp;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeGraph;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.testing.CollectiveHarness;
import io.flexlink.verify.DataPattern;
import io.flexlink.verify.Expected;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import org.bytedeco.cuda.global.cudart;

/**
 * One collective of every rank of a set of communicators (all on GPU 0), with its own device buffers and
 * several seeded data sets with their expected outputs: captured into graphs, enqueued eagerly, and every
 * element of every rank's output checked after each run. Outputs are poisoned before every run.
 */
final class CapturedCalls implements AutoCloseable {
    private static final DataType TYPE = DataType.FLOAT32;
    private static final ReduceOp OP = ReduceOp.SUM;

    private final CudaBackend backend;
    private final Communicator[] comms;
    private final Collective c;
    private final long count;
    private final int root;
    private final long outBytes;
    private final DeviceMemory[] in;
    private final DeviceMemory[] out;
    private final ByteBuffer[][] inputs;
    private final ByteBuffer[][] expected;
    private final ByteBuffer got;

    CapturedCalls(CudaBackend backend, Communicator[] comms, Collective c, long count, int dataSets) {
        this.backend = backend;
        this.comms = comms;
        this.c = c;
        this.count = count;
        int n = comms.length;
        int sz = TYPE.size();
        root = n - 1;
        long inElems = Expected.inputCount(c, count, n);
        long outElems = Expected.outputCount(c, count, n);
        outBytes = outElems * sz;
        in = new DeviceMemory[n];
        out = new DeviceMemory[n];
        inputs = new ByteBuffer[dataSets][n];
        expected = new ByteBuffer[dataSets][n];
        ReduceOp dataOp = DataPattern.dataOp(c, OP);
        for (int r = 0; r < n; r++) {
            in[r] = backend.allocate(0, inElems * sz);
            out[r] = backend.allocate(0, outBytes);
            for (int k = 0; k < dataSets; k++) {
                long seed = seed(k);
                inputs[k][r] = buffer(inElems * sz);
                DataPattern.fill(inputs[k][r], TYPE, dataOp, seed, n, r, 0, inElems);
                expected[k][r] = buffer(outBytes);
                for (long i = 0; i < outElems; i++) {
                    DataPattern.put(expected[k][r].position((int) (i * sz)), TYPE,
                            Expected.output(c, TYPE, OP, seed, n, r, root, count, i));
                }
                expected[k][r].position(0);
            }
        }
        got = buffer(outBytes);
    }

    /** Each collective its own seeds, so that one graph's output can never pass for another's. */
    private long seed(int k) {
        return 77 + k + 1000L * c.ordinal();
    }

    /**
     * Begins a capture of every rank's stream, enqueues the call as one group and ends the captures. {@code mode}:
     * the cudaStreamCaptureMode the application begins with cudaStreamBeginCapture itself, or -1 for FlexLink's
     * own {@link RuntimeStream#beginCapture} (global mode, and the graph refuses a replay after a close).
     */
    RuntimeGraph[] capture(RuntimeStream[] streams, int mode) {
        for (RuntimeStream s : streams) {
            if (mode < 0) {
                s.beginCapture();
            } else {
                assertEquals(0, cudart.cudaStreamBeginCapture(((CudaStream) s).handle(), mode), "cudaStreamBeginCapture");
            }
        }
        enqueue(streams);
        RuntimeGraph[] graphs = new RuntimeGraph[streams.length];
        for (int r = 0; r < streams.length; r++) {
            graphs[r] = streams[r].endCapture();
        }
        return graphs;
    }

    /** The call on every rank, one group (eager unless the streams are being captured). */
    void enqueue(RuntimeStream[] streams) {
        FlexLink.groupStart();
        for (int r = 0; r < comms.length; r++) {
            CollectiveHarness.enqueue(c, comms[r], in[r].address(), out[r].address(), count, TYPE, OP, root, streams[r]);
        }
        FlexLink.groupEnd();
    }

    /** Data set {@code k} into every input; every output poisoned. */
    void prepare(int k) {
        for (int r = 0; r < comms.length; r++) {
            backend.upload(in[r].address(), inputs[k][r].duplicate());
            backend.fill(out[r].address(), outBytes, (byte) 0xA5);
        }
    }

    /** Waits for every stream, then compares each writing rank's output with data set {@code k}'s. */
    void check(int k, RuntimeStream[] streams, String run, List<String> failures) {
        for (int r = 0; r < comms.length; r++) {
            streams[r].synchronize();
            if (!Expected.writes(c, r, root)) {
                continue;
            }
            backend.download(got.duplicate(), out[r].address());
            int at = got.duplicate().mismatch(expected[k][r].duplicate());
            if (at >= 0) {
                failures.add(c + " " + run + ", rank " + r + ": first wrong byte " + at);
            }
        }
    }

    static void launch(RuntimeGraph[] graphs, RuntimeStream[] streams) {
        for (int r = 0; r < graphs.length; r++) {
            graphs[r].launch(streams[r]);
        }
    }

    static void close(RuntimeGraph[] graphs) {
        for (RuntimeGraph g : graphs) {
            g.close();
        }
    }

    @Override
    public void close() {
        for (int r = 0; r < comms.length; r++) {
            in[r].close();
            out[r].close();
        }
    }

    private static ByteBuffer buffer(long bytes) {
        return ByteBuffer.allocateDirect((int) bytes).order(ByteOrder.nativeOrder());
    }
}
