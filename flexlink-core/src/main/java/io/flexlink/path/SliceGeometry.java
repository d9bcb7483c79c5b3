package io.flexlink.path;

import io.flexlink.Collective;
import io.flexlink.DataType;
import io.flexlink.sync.ChunkPlan;

/**
 * Where an auxiliary path's range of a call lies, the same for every staged path (PCIe, NVSHMEM): the
 * owners' segments of a reduction, the destinations of a gather, and the chunk plans of the call. One
 * instance per path, reused call after call without allocating.
 */
public final class SliceGeometry {
    private final int ranks;
    /** Chunk plans of the current call, one per distinct segment length (at most three occur). */
    private final ChunkPlan[] plans = {new ChunkPlan(), new ChunkPlan(), new ChunkPlan(), new ChunkPlan()};
    private final long[] planLengths = new long[4];
    private int plansUsed;

    public SliceGeometry(int ranks) {
        this.ranks = ranks;
    }

    /** The two algorithms of a staged path, between which {@link #dispatch} chooses by collective. */
    public interface Algorithms {
        /** Each producer's range (a rank mask) to every rank, or to the root's consumers (Broadcast). */
        void gather(CollectiveCall call, long producers, long offset, long length, int elementSize);

        /** Each owner's segment reduced from every rank, then sent where the collective needs it. */
        void scatterReduce(CollectiveCall call, long offset, long length, int elementSize);
    }

    /** Forgets the previous call's plans. */
    public void begin() {
        plansUsed = 0;
    }

    /** Starts a call ({@link #begin}) and runs the algorithm of its collective over {@code [offset, offset + length)}. */
    public void dispatch(CollectiveCall call, long offset, long length, Algorithms algorithms) {
        begin();
        int sz = call.type.size();
        switch (call.collective) {
            case ALL_GATHER:
                algorithms.gather(call, allRanks(), offset, length, sz);
                break;
            case BROADCAST:
                algorithms.gather(call, 1L << call.root, offset, length, sz);
                break;
            case ALL_REDUCE:
            case REDUCE_SCATTER:
            case REDUCE:
                algorithms.scatterReduce(call, offset, length, sz);
                break;
            default:
                throw new IllegalStateException("staged path: " + call.collective);
        }
    }

    /** The mask of every rank. */
    public long allRanks() {
        return ranks == 64 ? -1L : (1L << ranks) - 1;
    }

    /** The chunk plan of a range of {@code length} elements of {@code type}, chunks of at most {@code chunkElements}. */
    public ChunkPlan plan(long length, DataType type, long chunkElements) {
        for (int i = 0; i < plansUsed; i++) {
            if (planLengths[i] == length) {
                return plans[i];
            }
        }
        int i = plansUsed < plans.length ? plansUsed++ : plans.length - 1;
        planLengths[i] = length;
        long align = Math.max(1, 256 / type.size());
        return plans[i].plan(length, chunkElements, align, ChunkPlan.MIN_CHUNK_BYTES / type.size());
    }

    /** Destination of producer {@code p}'s slice element 0 (AllGather: its block; Broadcast: the buffer). */
    public static long gatherDst(CollectiveCall call, int p, long offset, int sz) {
        return call.collective == Collective.ALL_GATHER
                ? call.recv + ((long) p * call.count + offset) * sz
                : call.recv + offset * sz;
    }

    /** Elements per owner segment: the whole range for ReduceScatter, else an aligned n-th of it. */
    public long segmentLength(CollectiveCall call, long length) {
        if (call.collective == Collective.REDUCE_SCATTER) {
            return length;
        }
        long align = Math.max(1, 256 / call.type.size());
        long per = (length + ranks - 1) / ranks;
        return (per + align - 1) / align * align;
    }

    /** First element of owner {@code j}'s segment, relative to the path's range. */
    public long segmentStart(CollectiveCall call, long length, int j) {
        return call.collective == Collective.REDUCE_SCATTER ? 0 : Math.min(length, j * segmentLength(call, length));
    }

    /** End (exclusive) of owner {@code j}'s segment. */
    public long segmentEnd(CollectiveCall call, long length, int j) {
        return call.collective == Collective.REDUCE_SCATTER ? length
                : Math.min(length, (j + 1) * segmentLength(call, length));
    }

    /** Address of a rank's input for owner {@code j}'s segment. */
    public long input(CollectiveCall call, long offset, long length, int j, int sz) {
        if (call.collective == Collective.REDUCE_SCATTER) {
            return call.send + ((long) j * call.count + offset) * sz;
        }
        return call.send + (offset + segmentStart(call, length, j)) * sz;
    }
}
