package io.flexlink.bench;

import io.flexlink.DataType;
import io.flexlink.ReduceOp;
import io.flexlink.runtime.Backend;
import io.flexlink.verify.DataPattern;
import io.flexlink.verify.PreMulSumPattern;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;

/**
 * The -c check: inputs from {@link DataPattern} (a pure function of seed, rank and index), outputs
 * poisoned with the complement of the expected value so that an element nobody wrote cannot pass, one
 * call, then every output element compared with {@link PerfCollective#expected} (FlexLink's
 * {@code Expected}, plus sendrecv's and hypercube's patterns). The expected values go into a host
 * reference, in parallel, as {@link PerfCollective#reference()} says: once per check when every rank
 * receives the same (or a block of one array: ReduceScatter, Scatter), rank by rank for AlltoAll and
 * sendrecv, whose ranks each receive their own; transfers go through direct staging buffers of
 * {@link HostArray#CHUNK} bytes. Ranks that write nothing (the non-roots of reduce and gather) are not
 * compared.
 *
 * <p>With NCCL_TESTS_SPLIT each sub-communicator is checked as a collective of its own ranks (their ranks
 * and size in it), on data of its own: the seed differs by color, so that an output that came from another
 * sub-communicator's call is wrong too.
 */
final class DataCheck {
    private static final int MAX_ERRORS = 5;

    /**
     * Test hook: runs after the checked call and before {@link #verify}, and may change the outputs (to
     * prove that a wrong element is caught, counted and fails the run).
     */
    @FunctionalInterface
    interface Tamper {
        void beforeVerify(Workspace ws);
    }

    private final Backend backend;
    private final HostArray reference = new HostArray();
    private final ByteBuffer stageA = ByteBuffer.allocateDirect(HostArray.CHUNK).order(ByteOrder.nativeOrder());
    private final ByteBuffer stageB = ByteBuffer.allocateDirect(HostArray.CHUNK).order(ByteOrder.nativeOrder());
    private final List<String> errors = new ArrayList<>();

    private PerfCollective collective;
    private DataType type;
    private PerfOp op;
    private long seed;
    private long count;
    private long outElems;
    private int ranks;
    private int root;
    /** The rank whose expected output the reference holds (PER_RANK), -1 for a shared one, MIN_VALUE for none. */
    private int referenceOf = Integer.MIN_VALUE;
    /** The seed the reference was computed with (its sub-communicator's). */
    private long referenceSeed;

    DataCheck(Backend backend) {
        this.backend = backend;
    }

    /** Up to five wrong elements of the last {@link #verify}, for the error report. */
    List<String> errors() {
        return errors;
    }

    /**
     * Computes the expected outputs, poisons every rank's output and writes every rank's input, at the
     * addresses {@code ws} has laid out for this call.
     */
    void prepare(Workspace ws, CallSpec call, long seed) {
        this.collective = call.collective;
        this.type = call.type;
        this.op = call.op;
        this.seed = seed;
        this.count = call.shape.count;
        this.outElems = call.shape.recvElems;
        this.ranks = ws.commSize();
        this.root = Math.max(call.root, 0);
        this.referenceOf = Integer.MIN_VALUE;
        int sz = type.size();
        long inElems = call.shape.sendElems;
        int chunkElems = HostArray.CHUNK / sz;
        for (int r : byColor(ws)) {
            int g = ws.commRank(r);
            long refBase = referenceFor(g, seedOf(ws, r));
            for (long o = 0; o < outElems; o += chunkElems) {
                int len = (int) Math.min(chunkElems, outElems - o);
                stageA.clear();
                reference.read((refBase + o) * sz, stageA, len * sz);
                complement(stageA, len * sz);
                stageA.flip();
                backend.upload(ws.recvAddress(r) + o * sz, stageA);
            }
        }
        ReduceOp dataOp = collective.dataOp(op);
        boolean preMulSum = collective.preMulSum(op);
        for (int r = 0; r < ws.ranks(); r++) {
            int g = ws.commRank(r);
            if (!collective.reads(g, root)) {
                continue; // only the root's send buffer is read (broadcast, scatter)
            }
            for (long o = 0; o < inElems; o += chunkElems) {
                int len = (int) Math.min(chunkElems, inElems - o);
                fillParallel(stageA, type, dataOp, preMulSum, seedOf(ws, r), g, o, len);
                stageA.clear().limit(len * sz);
                backend.upload(ws.sendAddress(r) + o * sz, stageA);
            }
        }
    }

    /** Counts the output elements that differ from the expected ones, on every rank that writes (the root for reduce, gather). */
    long verify(Workspace ws) {
        errors.clear();
        int sz = type.size();
        int chunkElems = HostArray.CHUNK / sz;
        long wrong = 0;
        for (int r : byColor(ws)) {
            int g = ws.commRank(r);
            if (!collective.writes(g, root)) {
                continue; // reduce and gather write the root's buffer only
            }
            long refBase = referenceFor(g, seedOf(ws, r));
            for (long o = 0; o < outElems; o += chunkElems) {
                int len = (int) Math.min(chunkElems, outElems - o);
                stageA.clear().limit(len * sz);
                backend.download(stageA, ws.recvAddress(r) + o * sz);
                stageA.clear().limit(len * sz);
                stageB.clear();
                reference.read((refBase + o) * sz, stageB, len * sz);
                stageB.flip();
                if (!stageA.equals(stageB)) {
                    wrong += countWrong(ws.globalRank(r), o, len); // errors name the job's rank
                }
            }
        }
        return wrong;
    }

    private long countWrong(int rank, long first, int len) {
        long wrong = 0;
        for (int i = 0; i < len; i++) {
            long got = DataPattern.get(stageA, type, i);
            long want = DataPattern.get(stageB, type, i);
            if (got != want) {
                wrong++;
                if (errors.size() < MAX_ERRORS) {
                    errors.add("rank " + rank + " [" + (first + i) + "] = 0x" + Long.toHexString(got)
                            + ", expected 0x" + Long.toHexString(want));
                }
            }
        }
        return wrong;
    }

    /** The seed of local rank {@code r}'s data: the check's, moved by its sub-communicator's color. */
    private long seedOf(Workspace ws, int r) {
        return seed + 0x9E3779B97F4A7C15L * ws.color(r);
    }

    /** The local ranks, those of one color together, so that a shared reference is computed once per color. */
    private static int[] byColor(Workspace ws) {
        return IntStream.range(0, ws.ranks()).boxed().sorted(java.util.Comparator.comparingInt(ws::color))
                .mapToInt(Integer::intValue).toArray();
    }

    /**
     * Makes the reference hold communicator rank {@code g}'s expected output with data of {@code seed}
     * (computing it unless it does already) and returns the element of the reference where that output
     * starts.
     */
    private long referenceFor(int g, long seed) {
        if (seed != referenceSeed) {
            referenceOf = Integer.MIN_VALUE; // another sub-communicator's data
            referenceSeed = seed;
        }
        switch (collective.reference()) {
            case BLOCKS:
                if (referenceOf != -1) {
                    // element j is block j / count, element j % count, of one array of ranks x count
                    compute(count * ranks, j -> collective.expected(type, op, seed, ranks, (int) (j / count), root,
                            count, j % count));
                    referenceOf = -1;
                }
                return (long) g * count;
            case PER_RANK:
                if (referenceOf != g) {
                    compute(outElems, j -> collective.expected(type, op, seed, ranks, g, root, count, j));
                    referenceOf = g;
                }
                return 0;
            default:
                if (referenceOf != -1) {
                    compute(outElems, j -> collective.expected(type, op, seed, ranks, 0, root, count, j));
                    referenceOf = -1;
                }
                return 0;
        }
    }

    /** Fills the first {@code elems} elements of the reference with {@code value(j)}, in parallel chunks. */
    private void compute(long elems, java.util.function.LongUnaryOperator value) {
        int sz = type.size();
        long bytes = elems * sz;
        reference.ensure(bytes);
        int chunkElems = HostArray.CHUNK / sz;
        IntStream.range(0, reference.chunkCount(bytes)).parallel().forEach(k -> {
            ByteBuffer b = reference.chunk(k);
            long first = (long) k * chunkElems;
            long end = Math.min(elems, first + chunkElems);
            for (long j = first; j < end; j++) {
                DataPattern.put(b, type, value.applyAsLong(j));
            }
        });
    }

    /** Writes {@code len} input elements starting at {@code first} into {@code dst} from 0, in parallel blocks. */
    private void fillParallel(ByteBuffer dst, DataType type, ReduceOp op, boolean preMulSum, long seed, int rank,
                              long first, int len) {
        int block = 1 << 16;
        int blocks = (len + block - 1) / block;
        IntStream.range(0, blocks).parallel().forEach(k -> {
            int from = k * block;
            int n = Math.min(block, len - from);
            ByteBuffer d = dst.duplicate().order(ByteOrder.nativeOrder());
            d.clear().position(from * type.size());
            if (preMulSum) {
                PreMulSumPattern.fill(d, type, seed, ranks, rank, first + from, n);
            } else {
                DataPattern.fill(d, type, op, seed, ranks, rank, first + from, n);
            }
        });
    }

    /** Inverts every bit of the first {@code bytes} bytes (the complement of every element, whatever its size). */
    private static void complement(ByteBuffer b, int bytes) {
        int i = 0;
        for (; i + 8 <= bytes; i += 8) {
            b.putLong(i, ~b.getLong(i));
        }
        for (; i < bytes; i++) {
            b.put(i, (byte) ~b.get(i));
        }
    }
}
