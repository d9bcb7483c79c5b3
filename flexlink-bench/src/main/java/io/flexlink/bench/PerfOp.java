package io.flexlink.bench;

import io.flexlink.FlexLinkException;
import io.flexlink.ReduceOp;
import io.flexlink.Result;

/**
 * The operations of nccl-tests' {@code -o}: NCCL's five built-ins and {@code mulsum}, a PreMulSum with
 * nccl-tests' scalars ({@link io.flexlink.verify.PreMulSumPattern#scalar}: 1 on even ranks, 2 on odd ranks),
 * made with the host scalar of each rank.
 */
enum PerfOp {
    SUM(ReduceOp.SUM), PROD(ReduceOp.PROD), MAX(ReduceOp.MAX), MIN(ReduceOp.MIN), AVG(ReduceOp.AVG), MULSUM(null);

    /** The built-in operation, or null for {@link #MULSUM}. */
    final ReduceOp builtIn;

    PerfOp(ReduceOp builtIn) {
        this.builtIn = builtIn;
    }

    /** The name nccl-tests prints in its {@code redop} column. */
    String ncclName() {
        return builtIn == null ? "mulsum" : builtIn.ncclName();
    }

    /** The input data's profile for {@link io.flexlink.verify.DataPattern} (mulsum has its own pattern). */
    ReduceOp dataOp() {
        return builtIn == null ? ReduceOp.SUM : builtIn;
    }

    static PerfOp of(ReduceOp op) {
        return values()[op.ordinal()];
    }

    /** Parses {@code sum|prod|max|min|avg|mulsum}. */
    static PerfOp parse(String name) {
        if (name.trim().equalsIgnoreCase("mulsum")) {
            return MULSUM;
        }
        try {
            return of(ReduceOp.parse(name.trim()));
        } catch (FlexLinkException e) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "op: unknown reduction '" + name + "'");
        }
    }
}
