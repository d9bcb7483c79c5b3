package io.flexlink.bench;

import io.flexlink.Collective;
import io.flexlink.DataType;
import io.flexlink.ReduceOp;
import io.flexlink.verify.DataPattern;
import io.flexlink.verify.Expected;
import io.flexlink.verify.PreMulSumPattern;
import java.util.Locale;

/**
 * nccl-tests' collectives, one row each: the binary's name, the FlexLink collective that runs it (null for
 * the two point-to-point patterns, {@link #SENDRECV} and {@link #HYPERCUBE}, which run on grouped
 * {@code send}/{@code recv}), the buffer layout (how a sweep size becomes the count passed to the call, the
 * send and receive buffers and the in-place offsets), the algorithm-bandwidth multiplier, the bus-bandwidth
 * factor, and whether it takes a root or a reduction. Everything the tool does per collective is read from
 * this table and from {@link RankCalls}, which turns a row into calls of each target.
 */
enum PerfCollective {
    ALL_REDUCE("all_reduce", Collective.ALL_REDUCE, Layout.WHOLE, Bus.ALL_REDUCE, false, true),
    ALL_GATHER("all_gather", Collective.ALL_GATHER, Layout.GATHERED, Bus.RING, false, false),
    REDUCE_SCATTER("reduce_scatter", Collective.REDUCE_SCATTER, Layout.SCATTERED, Bus.RING, false, true),
    BROADCAST("broadcast", Collective.BROADCAST, Layout.WHOLE, Bus.ONE, true, false),
    REDUCE("reduce", Collective.REDUCE, Layout.WHOLE, Bus.ONE, true, true),
    /** nccl-tests' alltoall.cu: ncclAlltoAll, block j of every rank's send buffer to rank j. */
    ALLTOALL("alltoall", Collective.ALL_TO_ALL, Layout.EXCHANGED, Bus.RING, false, false),
    /** gather.cu: ncclGather, every rank's block into the root's receive buffer. */
    GATHER("gather", Collective.GATHER, Layout.GATHERED, Bus.RING, true, false),
    /** scatter.cu: ncclScatter, block r of the root's send buffer to rank r. */
    SCATTER("scatter", Collective.SCATTER, Layout.SCATTERED, Bus.RING, true, false),
    /** sendrecv.cu: in one group each rank sends to rank + 1 and receives from rank - 1 (mod n). */
    SENDRECV("sendrecv", null, Layout.WHOLE, Bus.ONE, false, false),
    /**
     * hypercube.cu: an AllGather in log2(n) rounds; in round {@code mask = 1, 2, 4, ...} each rank exchanges
     * the {@code mask} blocks it holds with rank {@code rank ^ mask} (one group per round). Power-of-two
     * rank counts only.
     */
    HYPERCUBE("hypercube", null, Layout.GATHERED, Bus.HYPERCUBE, false, false);

    /**
     * How a sweep size of {@code count} elements becomes the buffers, as nccl-tests' getCollByteCount:
     * {@code base} is {@code count / ranks} rounded down to 16 bytes for the per-rank layouts.
     */
    enum Layout {
        /** param = send = recv = count; in place: the receive buffer. */
        WHOLE,
        /** param = send = base, recv = base * ranks; in place rank r sends from recv + r * base. */
        GATHERED,
        /** param = recv = base, send = base * ranks; in place rank r receives into send + r * base. */
        SCATTERED,
        /** param = base, send = recv = base * ranks; in place: the receive buffer. */
        EXCHANGED
    }

    /** nccl-tests' getBw: algbw = param bytes x {@link #algMultiplier} / time, busbw = algbw x {@link #busFactor}. */
    enum Bus {
        /** AllReduce: 2(n-1)/n. */
        ALL_REDUCE,
        /** (n-1)/n, algbw over every rank's block. */
        RING,
        /** 1. */
        ONE,
        /** 1, algbw over (n-1) blocks. */
        HYPERCUBE
    }

    private final String testName;
    private final Collective collective;
    private final Layout layout;
    private final Bus bus;
    private final boolean rooted;
    private final boolean reduces;

    PerfCollective(String testName, Collective collective, Layout layout, Bus bus, boolean rooted, boolean reduces) {
        this.testName = testName;
        this.collective = collective;
        this.layout = layout;
        this.bus = bus;
        this.rooted = rooted;
        this.reduces = reduces;
    }

    /** nccl-tests' binary name without {@code _perf}. */
    String testName() {
        return testName;
    }

    /** {@code all_reduce_perf}, as nccl-tests names the program in its header and footer. */
    String programName() {
        return testName + "_perf";
    }

    /** The FlexLink collective that runs this row, or null for {@link #pointToPoint()} rows. */
    Collective collective() {
        return collective;
    }

    /** Sendrecv and hypercube: patterns of grouped {@code send}/{@code recv}, no collective of their own. */
    boolean pointToPoint() {
        return collective == null;
    }

    /**
     * Whether the in-place run is checked. nccl-tests checks every in-place run except alltoall's and
     * sendrecv's (NCCL supports neither in place). FlexLink's AlltoAll defines the in-place call (it reads
     * the input aside first), so it is checked here; a send and a receive on one buffer are not defined
     * (the receive may overwrite what the send has yet to read), so sendrecv's in-place run is timed and
     * shows N/A, as in nccl-tests.
     */
    boolean checksInPlace() {
        return this != SENDRECV;
    }

    /** Hypercube pairs rank with rank ^ mask: it needs a power-of-two number of ranks. */
    boolean needsPowerOfTwoRanks() {
        return this == HYPERCUBE;
    }

    /** Whether the balancer settles each size first (Sweep's tune): not for send/recv, which it does not time. */
    boolean tunes() {
        return !pointToPoint();
    }

    /**
     * Whether rows run (and print) each -o operation: the reductions, and sendrecv, whose nccl-tests loops
     * over -o and prints it although nothing is reduced.
     */
    boolean printsOp() {
        return reduces || this == SENDRECV;
    }

    /** The redop column of rows that do not print an operation: nccl-tests' {@code none}, hypercube's empty name. */
    String noOpName() {
        return this == HYPERCUBE ? "" : "none";
    }

    /** Whether global rank {@code rank} writes its receive buffer (Reduce and Gather: the root only). */
    boolean writes(int rank, int root) {
        return pointToPoint() || Expected.writes(collective, rank, root);
    }

    /** Whether global rank {@code rank} reads its send buffer (Broadcast and Scatter: the root only). */
    boolean reads(int rank, int root) {
        return pointToPoint() || Expected.reads(collective, rank, root);
    }

    /**
     * The operation {@link DataPattern} makes the inputs for: -o for reductions, MAX (any value) otherwise; a
     * reduction's mulsum takes {@link PreMulSumPattern}'s inputs instead.
     */
    ReduceOp dataOp(PerfOp op) {
        return reduces ? op.dataOp() : ReduceOp.MAX;
    }

    /** True when the inputs are {@link PreMulSumPattern}'s (a reduction with mulsum). */
    boolean preMulSum(PerfOp op) {
        return reduces && op == PerfOp.MULSUM;
    }

    /**
     * Raw bits of element {@code index} of rank {@code rank}'s receive buffer after one call on inputs
     * from {@link DataPattern}, {@code count} being the param count: {@link Expected} for the collectives;
     * sendrecv receives rank - 1's input; hypercube gathers every rank's, as AllGather.
     */
    long expected(DataType type, PerfOp perfOp, long seed, int ranks, int rank, int root, long count, long index) {
        if (preMulSum(perfOp)) {
            return PreMulSumPattern.reduce(type, seed, ranks, collective == Collective.REDUCE_SCATTER
                    ? (long) rank * count + index : index);
        }
        ReduceOp op = perfOp.dataOp();
        switch (this) {
            case SENDRECV:
                return DataPattern.value(type, dataOp(perfOp), seed, ranks, (rank - 1 + ranks) % ranks, index);
            case HYPERCUBE:
                return Expected.output(Collective.ALL_GATHER, type, op, seed, ranks, rank, root, count, index);
            default:
                return Expected.output(collective, type, op, seed, ranks, rank, root, count, index);
        }
    }

    /**
     * How the expected outputs of the ranks relate: {@code SHARED}, one array every rank receives;
     * {@code BLOCKS}, rank r's output is block r of one array of {@code ranks x count} elements
     * (ReduceScatter's reduction, Scatter's root input); {@code PER_RANK}, each rank's own (AlltoAll,
     * sendrecv), computed rank by rank.
     */
    enum Reference { SHARED, BLOCKS, PER_RANK }

    Reference reference() {
        switch (this) {
            case REDUCE_SCATTER:
            case SCATTER: return Reference.BLOCKS;
            case ALLTOALL:
            case SENDRECV: return Reference.PER_RANK;
            default: return Reference.SHARED;
        }
    }

    boolean rooted() {
        return rooted;
    }

    boolean reduces() {
        return reduces;
    }

    Layout layout() {
        return layout;
    }

    /** nccl-tests' factor from algbw to busbw for {@code ranks} ranks. */
    double busFactor(int ranks) {
        switch (bus) {
            case ALL_REDUCE: return 2.0 * (ranks - 1) / ranks;
            case RING: return (double) (ranks - 1) / ranks;
            default: return 1.0;
        }
    }

    /** What multiplies the param count's bytes in algbw: 1, the ranks, or ranks - 1. */
    int algMultiplier(int ranks) {
        if (bus == Bus.HYPERCUBE) {
            return ranks - 1;
        }
        return layout == Layout.WHOLE ? 1 : ranks;
    }

    /** Parses {@code all_reduce}, {@code all_reduce_perf}, {@code allreduce}, {@code ALL_REDUCE}; null if unknown. */
    static PerfCollective find(String name) {
        String n = name.toLowerCase(Locale.ROOT).replace("_perf", "").replace("_", "");
        for (PerfCollective c : values()) {
            if (c.testName.replace("_", "").equals(n)) {
                return c;
            }
        }
        return null;
    }

    /** Every name, for messages. */
    static String names() {
        StringBuilder sb = new StringBuilder();
        for (PerfCollective c : values()) {
            sb.append(sb.length() == 0 ? "" : ", ").append(c.testName);
        }
        return sb.toString();
    }

    /** The buffers of one sweep size of one type on {@code ranks} ranks. */
    Shape shape(long size, DataType type, int ranks) {
        int sz = type.size();
        long count = size / sz;
        long base = (count / ranks) / Math.max(1, 16 / sz) * Math.max(1, 16 / sz);
        switch (layout) {
            case GATHERED: return new Shape(base, base, base * ranks, base, 0, sz);
            case SCATTERED: return new Shape(base, base * ranks, base, 0, base, sz);
            case EXCHANGED: return new Shape(base, base * ranks, base * ranks, 0, 0, sz);
            default: return new Shape(count, count, count, 0, 0, sz);
        }
    }

    /** One size of one type: what the collective is called with, and what nccl-tests prints. */
    static final class Shape {
        /** The count passed to the collective (nccl-tests' count column). */
        final long count;
        /** Elements of each rank's send and receive buffer. */
        final long sendElems;
        final long recvElems;
        /** In place, rank r sends from {@code recv + r * sendInPlace} and receives at {@code recv + r * recvInPlace} (elements). */
        final long sendInPlace;
        final long recvInPlace;
        /** Bytes of the larger buffer (nccl-tests' size column). */
        final long bytes;
        final int typeSize;

        Shape(long count, long sendElems, long recvElems, long sendInPlace, long recvInPlace, int typeSize) {
            this.count = count;
            this.sendElems = sendElems;
            this.recvElems = recvElems;
            this.sendInPlace = sendInPlace;
            this.recvInPlace = recvInPlace;
            this.typeSize = typeSize;
            this.bytes = Math.max(sendElems, recvElems) * typeSize;
        }
    }
}
