package io.flexlink.reliability;

import io.flexlink.Collective;
import io.flexlink.DataType;
import io.flexlink.ReduceOp;
import io.flexlink.runtime.host.HostBackend;
import io.flexlink.verify.DataPattern;
import io.flexlink.verify.Expected;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Inputs and expected outputs of a fuzzed call on one rank, as {@link io.flexlink.testing.CollectiveHarness}
 * makes them but for any buffer layout: the output is poisoned with the complement of the expected
 * value, then the input written (it may overlap the output in place).
 */
final class FuzzData {
    private FuzzData() {
    }

    private static long seed(FuzzCall c) {
        return 1 + c.count * 31 + c.collective.ordinal();
    }

    private static boolean inPlace(FuzzCall c, int r, long send, long recv) {
        long own = (long) r * c.count * c.type.size();
        boolean inBlock = c.collective == Collective.ALL_GATHER || c.collective == Collective.GATHER;
        boolean outBlock = c.collective == Collective.REDUCE_SCATTER || c.collective == Collective.SCATTER;
        return send == recv || (inBlock && send == recv + own) || (outBlock && recv == send + own);
    }

    static void prepare(HostBackend backend, FuzzCall c, int r, long send, long recv, int n) {
        DataType t = c.type;
        ReduceOp dataOp = DataPattern.dataOp(c.collective, c.op);
        long inElems = Expected.inputCount(c.collective, c.count, n);
        long outElems = Expected.outputCount(c.collective, c.count, n);
        if (recv != 0) {
            ByteBuffer out = ByteBuffer.allocateDirect((int) (outElems * t.size())).order(ByteOrder.nativeOrder());
            for (long i = 0; i < outElems; i++) {
                DataPattern.put(out, t, ~Expected.output(c.collective, t, c.op, seed(c), n, r, c.root, c.count, i));
            }
            out.flip();
            backend.upload(recv, out);
        }
        if (send != 0 && (Expected.reads(c.collective, r, c.root) || inPlace(c, r, send, recv))) {
            ByteBuffer in = ByteBuffer.allocateDirect((int) (inElems * t.size())).order(ByteOrder.nativeOrder());
            DataPattern.fill(in, t, dataOp, seed(c), n, r, 0, inElems);
            backend.upload(send, in);
        }
    }

    /** The output buffer of rank {@code r} as {@link #prepare} left it (what a call must not touch). */
    static ByteBuffer snapshot(HostBackend backend, FuzzCall c, int r, long recv, int n) {
        if (recv == 0) {
            return null;
        }
        long outElems = Expected.outputCount(c.collective, c.count, n);
        ByteBuffer out = ByteBuffer.allocateDirect((int) (outElems * c.type.size())).order(ByteOrder.nativeOrder());
        backend.download(out, recv);
        return out;
    }

    /**
     * Null when every output element of rank {@code r} is right, else the first wrong one; {@code before}
     * is the {@link #snapshot} of an output the call must leave alone (Reduce's non-roots).
     */
    static String check(HostBackend backend, FuzzCall c, int r, long recv, int n, ByteBuffer before) {
        if (recv == 0) {
            return null; // a non-root of Reduce: no output
        }
        DataType t = c.type;
        long outElems = Expected.outputCount(c.collective, c.count, n);
        ByteBuffer out = ByteBuffer.allocateDirect((int) (outElems * t.size())).order(ByteOrder.nativeOrder());
        backend.download(out, recv);
        boolean written = Expected.writes(c.collective, r, c.root);
        long wrong = 0;
        String first = null;
        for (long i = 0; i < outElems; i++) {
            long want = written ? Expected.output(c.collective, t, c.op, seed(c), n, r, c.root, c.count, i)
                    : DataPattern.get(before, t, i);
            want &= DataPattern.mask(t);
            long got = DataPattern.get(out, t, i);
            if (got != want) {
                wrong++;
                if (first == null) {
                    first = "[" + i + "] = 0x" + Long.toHexString(got) + ", expected 0x" + Long.toHexString(want);
                }
            }
        }
        return wrong == 0 ? null : wrong + " of " + outElems + " wrong, first " + first;
    }
}
