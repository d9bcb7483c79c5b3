package io.flexlink.bench;

import io.flexlink.runtime.Backend;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeEvent;
import io.flexlink.runtime.RuntimeStream;
import java.util.ArrayList;
import java.util.List;

/**
 * What every local rank needs to run and time collectives: a stream, a send and a receive buffer of
 * the sweep's largest size (plus room for -u), and timing events. FlexLink's communicators and the
 * baselines run on these same buffers and streams, one after the other.
 *
 * <p>Addresses follow nccl-tests: -u shifts both buffers by that many elements, in place uses the
 * receive buffer with the collective's in-place offsets ({@link PerfCollective.Shape}), and iteration
 * {@code i} works {@code bytes * (i % (maxBytes / bytes))} further into the buffers, so that small sizes
 * do not hit the same cache lines every time.
 */
final class Workspace implements AutoCloseable {
    /**
     * Where the streams come from: the backend's own, or (CUDA) streams the tool creates itself and wraps,
     * so that the raw NCCL baseline can be handed the very same {@code cudaStream_t}s.
     */
    interface StreamSource extends AutoCloseable {
        RuntimeStream open(int rank, int device);

        @Override
        void close();
    }

    private final Backend backend;
    private final StreamSource streamSource;
    private final int ranks;
    private final int[] devices;
    private final long maxBytes;
    private final int unalign;
    private final RuntimeStream[] streams;
    private final DeviceMemory[] send;
    private final DeviceMemory[] recv;
    /** Per local rank, the timing events made so far (-I), reused across runs. */
    private final List<List<RuntimeEvent>> events = new ArrayList<>();
    private final long[] sendBase;
    private final long[] recvBase;
    /** The job rank of local rank 0 (other processes hold the rest), and each job rank's communicator. */
    private final int firstRank;
    private final RankLayout layout;
    private long stepBytes;
    private long steps = 1;

    /**
     * Local rank {@code i} is rank {@code firstRank + i} of the job, which calls the communicator
     * {@code layout} gives it, on {@code devices[i]}; buffers hold {@code maxBytes} plus {@code unalign}
     * elements of the largest type.
     */
    Workspace(Backend backend, StreamSource streamSource, int[] devices, long maxBytes, int unalign, int firstRank,
              RankLayout layout) {
        this.backend = backend;
        this.streamSource = streamSource;
        this.devices = devices.clone();
        this.maxBytes = maxBytes;
        this.unalign = unalign;
        this.firstRank = firstRank;
        this.layout = layout;
        this.ranks = devices.length;
        streams = new RuntimeStream[ranks];
        send = new DeviceMemory[ranks];
        recv = new DeviceMemory[ranks];
        sendBase = new long[ranks];
        recvBase = new long[ranks];
        long bytes = Math.max(maxBytes, 64) + 8L * unalign;
        try {
            for (int r = 0; r < ranks; r++) {
                streams[r] = streamSource.open(r, devices[r]);
                send[r] = backend.allocate(devices[r], bytes);
                recv[r] = backend.allocate(devices[r], bytes);
                // defined contents for the timed runs (no NaN or denormal slow paths)
                backend.fill(send[r].address(), bytes, (byte) 0);
                backend.fill(recv[r].address(), bytes, (byte) 0);
                events.add(new ArrayList<>());
            }
        } catch (RuntimeException | Error e) {
            close();
            throw e;
        }
    }

    /** Ranks driven by this process. */
    int ranks() {
        return ranks;
    }

    int device(int local) {
        return devices[local];
    }

    /** The job rank of local rank {@code local}. */
    int globalRank(int local) {
        return firstRank + local;
    }

    /** The rank of local rank {@code local} in the communicator its collectives run on. */
    int commRank(int local) {
        return layout.commRank(globalRank(local));
    }

    /** The color of local rank {@code local}'s communicator (0 without NCCL_TESTS_SPLIT). */
    int color(int local) {
        return layout.color(globalRank(local));
    }

    /** Ranks of the communicator each collective runs on (every process's, or one sub-communicator's). */
    int commSize() {
        return layout.commSize();
    }

    /** Local rank {@code local}'s two allocations, whole (-R 1 registers them, as nccl-tests does). */
    List<io.flexlink.Buffer> buffers(int local) {
        return List.of(send[local], recv[local]);
    }

    Backend backend() {
        return backend;
    }

    RuntimeStream stream(int local) {
        return streams[local];
    }

    /**
     * Lays out every rank's buffers for calls of {@code s}: separate buffers out of place, the receive
     * buffer with the collective's in-place offsets otherwise; -u elements in.
     */
    void layout(PerfCollective.Shape s, boolean inPlace) {
        long skew = (long) unalign * s.typeSize;
        for (int r = 0; r < ranks; r++) {
            long rb = recv[r].address() + skew;
            if (!inPlace) {
                sendBase[r] = send[r].address() + skew;
                recvBase[r] = rb;
            } else {
                sendBase[r] = rb + commRank(r) * s.sendInPlace * s.typeSize;
                recvBase[r] = rb + commRank(r) * s.recvInPlace * s.typeSize;
            }
        }
        stepBytes = s.bytes;
        steps = s.bytes == 0 ? 1 : Math.max(1, maxBytes / s.bytes);
    }

    private long shift(int iter) {
        return stepBytes * (iter % steps);
    }

    /** The send address of local rank {@code rank} at iteration {@code iter} (0 for checked calls). */
    long send(int rank, int iter) {
        return sendBase[rank] + shift(iter);
    }

    long recv(int rank, int iter) {
        return recvBase[rank] + shift(iter);
    }

    /** The addresses of the checked call (iteration 0). */
    long sendAddress(int rank) {
        return send(rank, 0);
    }

    long recvAddress(int rank) {
        return recv(rank, 0);
    }

    /** {@code count} timing events of local rank {@code rank} (made once, reused). */
    List<RuntimeEvent> events(int rank, int count) {
        List<RuntimeEvent> list = events.get(rank);
        while (list.size() < count) {
            list.add(backend.createEvent(devices[rank], true));
        }
        return list;
    }

    /**
     * Starts capturing local rank {@code local}'s stream (-G): in CUDA's thread-local mode on the tool's own
     * CUDA streams ({@link CudaStreams#beginCapture}), else through {@code RuntimeStream.beginCapture}.
     */
    void beginCapture(int local) {
        if (streamSource instanceof CudaStreams) {
            ((CudaStreams) streamSource).beginCapture(local);
        } else {
            streams[local].beginCapture();
        }
    }

    /** Waits for every local rank's stream; throws the first failure of their work. */
    void synchronize() {
        for (RuntimeStream s : streams) {
            s.synchronize();
        }
    }

    /**
     * After an abort (a failure, a -T timeout): streams may still be finishing a transfer that the abort
     * does not cut short (an emulated slow link), so nothing is waited for and the buffers are left
     * allocated rather than freed under a transfer that may still touch them; the process ends soon after.
     */
    void abandon() {
        abandoned = true;
    }

    private boolean abandoned;

    @Override
    public void close() {
        if (abandoned) {
            for (RuntimeStream s : streams) {
                closeQuietly(s);
            }
            return;
        }
        for (int r = 0; r < ranks; r++) {
            if (streams[r] != null) {
                try {
                    streams[r].synchronize();
                } catch (RuntimeException e) {
                    // already reported by the run
                }
            }
            closeQuietly(send[r]);
            closeQuietly(recv[r]);
            if (r < events.size()) {
                events.get(r).forEach(Workspace::closeQuietly);
            }
            closeQuietly(streams[r]);
        }
        streamSource.close();
    }

    private static void closeQuietly(AutoCloseable c) {
        if (c != null) {
            try {
                c.close();
            } catch (Exception e) {
                // nothing more to do
            }
        }
    }
}
