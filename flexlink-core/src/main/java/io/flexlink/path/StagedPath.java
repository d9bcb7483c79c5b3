package io.flexlink.path;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.sync.Channel;
import io.flexlink.sync.EnqueueBudget;
import io.flexlink.sync.Lane;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A path that stages data through a {@link Channel}: the PCIe path (pinned host memory) and the NVSHMEM
 * path (symmetric GPU memory) are both this class, with their own channel. Each rank has a send stream
 * (producer side) and a receive stream (consumer side), so both directions of a link are busy at once, and a
 * local stream for the work that stays on the device (reductions, the rank's own block), which then
 * overlaps the receive stream's copies; the algorithms are {@link StagedAlgorithms}, the same for every
 * channel.
 */
public final class StagedPath implements Path {
    private static final Logger LOG = LoggerFactory.getLogger(StagedPath.class);
    /**
     * The most ranks of a communicator on one device whose paths get a local stream. CUDA gives a device 8
     * hardware queues (or {@code CUDA_DEVICE_MAX_CONNECTIONS}) and serializes the streams beyond them in
     * submission order, so a stream blocked on a peer's flag can hold back the stream that flag waits for. Eight
     * ranks already have 16 path streams besides the callers' and NCCL's, and keep the receive stream for their
     * reductions.
     */
    static final int LOCAL_STREAM_RANKS_PER_DEVICE = 2;

    /**
     * Whether a path of a rank whose device {@code ranksOnDevice} ranks share gets a local stream: its channel's
     * rows are then read on another stream than the one that fills them, and alternate between two sets. A rank
     * alone on its device does: its streams wait only on other devices' work and on its own earlier events, which
     * no sharing of queues can hold back. Two ranks of one device wait on each other's streams, so they do only
     * where the device runs twice their streams independently ({@code streamQueues}: three path streams and a
     * caller's each, and as many again for NCCL's and the application's): at CUDA's default of 8 queues two
     * ranks' 8 streams would take them all, and one more stream would put two of them in one queue.
     */
    public static boolean localStream(int ranksOnDevice, int streamQueues) {
        return ranksOnDevice == 1 || ranksOnDevice <= LOCAL_STREAM_RANKS_PER_DEVICE
                && 2 * ranksOnDevice * 4L <= streamQueues;
    }

    /** {@link #localStream(int, int)} for the rank that {@code context} sets a path up for. */
    public static boolean localStream(PathContext context) {
        return localStream(context.ranksOnDevice(), context.backend().streamQueues());
    }

    private final String name;
    private final Channel channel;
    /** Send, receive and (where it has one) local, in that order. */
    private final RuntimeStream[] streams;
    private final StagedAlgorithms algorithms;
    private volatile boolean closed;

    /**
     * Creates the path's streams on {@code device}, with a local stream where {@code localStream} (from
     * {@link #localStream(PathContext)}, which the channel's rows follow; without, the receive stream does its
     * work); the path owns {@code channel} from then on. {@code budget} (how many ranks one thread enqueues)
     * sets the smallest chunk; every rank must pass the same.
     */
    public StagedPath(String name, Backend backend, Channel channel, int rank, int size, int device,
                      boolean localStream, EnqueueBudget budget) {
        this.name = name;
        this.channel = channel;
        String[] roles = localStream
                ? new String[] {".send.r", ".recv.r", ".local.r"} : new String[] {".send.r", ".recv.r"};
        RuntimeStream[] made = new RuntimeStream[roles.length];
        StagedAlgorithms a;
        try {
            for (int i = 0; i < roles.length; i++) {
                made[i] = backend.createStream(device, name + roles[i] + rank);
            }
            Lane recv = new Lane(made[1]);
            a = new StagedAlgorithms(backend, device, rank, size, channel, new Lane(made[0]), recv,
                    made.length > 2 ? new Lane(made[2]) : recv, budget);
        } catch (RuntimeException | Error e) {
            for (int i = made.length - 1; i >= 0; i--) {
                if (made[i] != null) {
                    made[i].close();
                }
            }
            throw e;
        }
        this.algorithms = a;
        this.streams = made;
        LOG.debug("PATH {} rank {}/{} device {}: {} B slots, {} B pieces, {}, {} streams", name, rank, size, device,
                channel.slotBytes(), channel.pieceBytes(), budget, made.length);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public RuntimeStream[] streams() {
        return streams;
    }

    @Override
    public boolean capturable() {
        return channel.capturable();
    }

    @Override
    public void enqueue(CollectiveCall call, long offset, long length) {
        channel.begin();
        try {
            algorithms.run(call, offset, length);
        } finally {
            channel.end();
        }
    }

    @Override
    public void exchange(io.flexlink.runtime.PeerOps ops, RuntimeStream stream) {
        channel.begin();
        try {
            algorithms.exchange(ops);
        } finally {
            channel.end();
        }
    }

    @Override
    public void abort() {
        if (!closed) {
            channel.abort();
        }
    }

    /** Releases the channel's waits again (teardown, once the streams are idle). */
    public void releaseAll() {
        if (!closed) {
            channel.releaseAll();
        }
    }

    @Override
    public FlexLinkException asyncError() {
        int by = closed ? -1 : channel.abortedBy();
        return by < 0 ? null : new FlexLinkException(Result.REMOTE_ERROR, name + ": rank " + by
                + " aborted the communicator");
    }

    @Override
    public String describeStall() {
        return closed ? null : channel.describeStall();
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (RuntimeStream s : streams) {
            s.close();
        }
        algorithms.close();
        channel.close();
    }
}
