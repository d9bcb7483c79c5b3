package io.flexlink.bench;

import io.flexlink.Collective;
import io.flexlink.DataType;
import io.flexlink.ReduceOp;
import io.flexlink.runtime.Backend;
import io.flexlink.verify.DataPattern;
import io.flexlink.verify.Expected;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;

/**
 * The -c check: inputs from {@link DataPattern} (a pure function of seed, rank and index), outputs
 * poisoned with the complement of the expected value so that an element nobody wrote cannot pass, one
 * call, then every output element compared with {@link Expected}. The expected values are computed once
 * per check into a host reference (rank-independent for all but ReduceScatter, whose ranks own disjoint
 * blocks of it), in parallel; transfers go through direct staging buffers of {@link HostArray#CHUNK} bytes.
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

    private Collective collective;
    private DataType type;
    private long count;
    private int ranks;
    private int root;

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
        Collective c = call.collective.collective();
        DataType type = call.type;
        ReduceOp op = call.op;
        int root = call.root;
        long count = call.shape.count;
        this.collective = c;
        this.type = type;
        this.count = count;
        this.ranks = ws.worldSize();
        this.root = Math.max(root, 0);
        int sz = type.size();
        long refElems = c == Collective.REDUCE_SCATTER ? count * ranks : Expected.outputCount(c, count, ranks);
        computeReference(c, type, op, seed, refElems);
        long outElems = Expected.outputCount(c, count, ranks);
        long inElems = Expected.inputCount(c, count, ranks);
        int chunkElems = HostArray.CHUNK / sz;
        for (int r = 0; r < ws.ranks(); r++) {
            long refBase = refBase(ws.globalRank(r));
            for (long o = 0; o < outElems; o += chunkElems) {
                int len = (int) Math.min(chunkElems, outElems - o);
                stageA.clear();
                reference.read((refBase + o) * sz, stageA, len * sz);
                complement(stageA, len * sz);
                stageA.flip();
                backend.upload(ws.recvAddress(r) + o * sz, stageA);
            }
        }
        ReduceOp dataOp = DataPattern.dataOp(c, op);
        for (int r = 0; r < ws.ranks(); r++) {
            int g = ws.globalRank(r);
            if (c == Collective.BROADCAST && g != this.root) {
                continue; // only the root's send buffer is read
            }
            for (long o = 0; o < inElems; o += chunkElems) {
                int len = (int) Math.min(chunkElems, inElems - o);
                fillParallel(stageA, type, dataOp, seed, g, o, len);
                stageA.clear().limit(len * sz);
                backend.upload(ws.sendAddress(r) + o * sz, stageA);
            }
        }
    }

    /** Counts the output elements that differ from the expected ones, on every rank (the root only for reduce). */
    long verify(Workspace ws) {
        errors.clear();
        int sz = type.size();
        long outElems = Expected.outputCount(collective, count, ranks);
        int chunkElems = HostArray.CHUNK / sz;
        long wrong = 0;
        for (int r = 0; r < ws.ranks(); r++) {
            int g = ws.globalRank(r);
            if (collective == Collective.REDUCE && g != root) {
                continue; // reduce writes the root's buffer only
            }
            long refBase = refBase(g);
            for (long o = 0; o < outElems; o += chunkElems) {
                int len = (int) Math.min(chunkElems, outElems - o);
                stageA.clear().limit(len * sz);
                backend.download(stageA, ws.recvAddress(r) + o * sz);
                stageA.clear().limit(len * sz);
                stageB.clear();
                reference.read((refBase + o) * sz, stageB, len * sz);
                stageB.flip();
                if (!stageA.equals(stageB)) {
                    wrong += countWrong(g, o, len);
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

    /** Element of the reference where rank {@code r}'s output starts. */
    private long refBase(int r) {
        return collective == Collective.REDUCE_SCATTER ? (long) r * count : 0;
    }

    private void computeReference(Collective c, DataType type, ReduceOp op, long seed, long elems) {
        int sz = type.size();
        long bytes = elems * sz;
        reference.ensure(bytes);
        int chunkElems = HostArray.CHUNK / sz;
        IntStream.range(0, reference.chunkCount(bytes)).parallel().forEach(k -> {
            ByteBuffer b = reference.chunk(k);
            long first = (long) k * chunkElems;
            long end = Math.min(elems, first + chunkElems);
            for (long j = first; j < end; j++) {
                long v = c == Collective.REDUCE_SCATTER
                        ? Expected.output(c, type, op, seed, ranks, (int) (j / count), root, count, j % count)
                        : Expected.output(c, type, op, seed, ranks, 0, root, count, j);
                DataPattern.put(b, type, v);
            }
        });
    }

    /** Writes {@code len} input elements starting at {@code first} into {@code dst} from 0, in parallel blocks. */
    private void fillParallel(ByteBuffer dst, DataType type, ReduceOp op, long seed, int rank, long first,
                                     int len) {
        int block = 1 << 16;
        int blocks = (len + block - 1) / block;
        IntStream.range(0, blocks).parallel().forEach(k -> {
            int from = k * block;
            int n = Math.min(block, len - from);
            ByteBuffer d = dst.duplicate().order(ByteOrder.nativeOrder());
            d.clear().position(from * type.size());
            DataPattern.fill(d, type, op, seed, ranks, rank, first + from, n);
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
