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
     * submission order, so a stream blocked on a peer's flag can hold back the stream that flag waits for: two
     * ranks' three streams and their callers' fit 8 queues; eight ranks already have 16 path streams besides
     * the callers' and NCCL's, and keep the receive stream for their reductions.
     */
    static final int LOCAL_STREAM_RANKS_PER_DEVICE = 2;

    /**
     * Whether a path of a rank whose device {@code ranksOnDevice} ranks share gets a local stream: its channel's
     * rows are then read on another stream than the one that fills them, and alternate between two sets.
     */
    public static boolean localStream(int ranksOnDevice) {
        return ranksOnDevice <= LOCAL_STREAM_RANKS_PER_DEVICE;
    }

    private final String name;
    private final Channel channel;
    /** Send, receive and (where it has one) local, in that order. */
    private final RuntimeStream[] streams;
    private final StagedAlgorithms algorithms;
    private volatile boolean closed;

    /**
     * Creates the path's streams on {@code device}, which {@code ranksOnDevice} of the communicator's ranks use
     * (up to {@link #LOCAL_STREAM_RANKS_PER_DEVICE} get a local stream; beyond, the receive stream does its
     * work); the path owns {@code channel} from then on. {@code budget} (how many ranks one thread enqueues)
     * sets the smallest chunk; every rank must pass the same.
     */
    public StagedPath(String name, Backend backend, Channel channel, int rank, int size, int device,
                      int ranksOnDevice, EnqueueBudget budget) {
        this.name = name;
        this.channel = channel;
        String[] roles = localStream(ranksOnDevice)
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
        LOG.debug("PATH {} rank {}/{} device {}: {} B slots, {} B pieces, {}, {} streams ({} rank(s) on the device)",
                name, rank, size, device, channel.slotBytes(), channel.pieceBytes(), budget, made.length,
                ranksOnDevice);
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
