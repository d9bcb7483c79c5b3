package io.flexlink.bench;

import io.flexlink.Collective;
import io.flexlink.DataType;
import java.util.Locale;

/**
 * nccl-tests' collectives, one row each: the binary's name, the FlexLink collective that runs it (null
 * where FlexLink has none yet, and the feature that is missing), the buffer layout (how a sweep size
 * becomes the count passed to the call, the send and receive buffers and the in-place offsets), the
 * algorithm-bandwidth multiplier, the bus-bandwidth factor, and whether it takes a root or a reduction.
 * Everything the tool does per collective is read from this table: adding a collective that the core
 * gains later is one new {@code Collective} here and one case in the call targets.
 */
enum PerfCollective {
    ALL_REDUCE("all_reduce", Collective.ALL_REDUCE, Layout.WHOLE, Bus.ALL_REDUCE, false, true, null),
    ALL_GATHER("all_gather", Collective.ALL_GATHER, Layout.GATHERED, Bus.RING, false, false, null),
    REDUCE_SCATTER("reduce_scatter", Collective.REDUCE_SCATTER, Layout.SCATTERED, Bus.RING, false, true, null),
    BROADCAST("broadcast", Collective.BROADCAST, Layout.WHOLE, Bus.ONE, true, false, null),
    REDUCE("reduce", Collective.REDUCE, Layout.WHOLE, Bus.ONE, true, true, null),
    ALLTOALL("alltoall", null, Layout.EXCHANGED, Bus.RING, false, false, "AlltoAll"),
    GATHER("gather", null, Layout.GATHERED, Bus.RING, true, false, "Gather"),
    SCATTER("scatter", null, Layout.SCATTERED, Bus.RING, true, false, "Scatter"),
    SENDRECV("sendrecv", null, Layout.WHOLE, Bus.ONE, false, false, "Send/Recv"),
    HYPERCUBE("hypercube", null, Layout.GATHERED, Bus.HYPERCUBE, false, false, "Send/Recv (its hypercube exchange)");

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
    /** The FlexLink collective that does not exist yet, or null. */
    private final String missing;

    PerfCollective(String testName, Collective collective, Layout layout, Bus bus, boolean rooted, boolean reduces,
                   String missing) {
        this.testName = testName;
        this.collective = collective;
        this.layout = layout;
        this.bus = bus;
        this.rooted = rooted;
        this.reduces = reduces;
        this.missing = missing;
    }

    /** nccl-tests' binary name without {@code _perf}. */
    String testName() {
        return testName;
    }

    /** {@code all_reduce_perf}, as nccl-tests names the program in its header and footer. */
    String programName() {
        return testName + "_perf";
    }

    /** The FlexLink collective; only for rows where {@link #supported()}. */
    Collective collective() {
        return collective;
    }

    boolean supported() {
        return collective != null;
    }

    /** Why FlexLink cannot run this collective yet (exit code 2), for a row that is not {@link #supported()}. */
    String missingMessage() {
        return testName + ": FlexLink has no " + missing + " collective yet (the Communicator API offers "
                + "all_reduce, all_gather, reduce_scatter, broadcast and reduce); nothing was run";
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
