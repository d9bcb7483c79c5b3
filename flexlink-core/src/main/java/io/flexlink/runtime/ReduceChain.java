package io.flexlink.runtime;

import io.flexlink.DataType;
import io.flexlink.ReduceOp;

/**
 * The operation and divisor of each step of a chain of reductions over {@code ranks} inputs, where step
 * 0 combines two ranks' own inputs ({@code a}, {@code b}) and each later step adds one more rank's own
 * input ({@code b}) to the running result ({@code a}); {@code ranks - 1} steps in all.
 *
 * <p>AVG on integers sums and divides at the last step (NCCL divides the wrapped sum). AVG on
 * floating-point types divides every input by the rank count before adding it, as NCCL's
 * pre-multiplied average does: a sum first would overflow FLOAT16 or saturate FP8 in the partial sums
 * even where the average itself is small. Step 0 then takes {@code divisor = ranks}
 * ({@code a / n + b / n}) and the later steps {@code -ranks} ({@code a + b / n}).
 */
public final class ReduceChain {
    private ReduceChain() {
    }

    /** The operation of step {@code t} of the chain of {@code ranks - 1} steps for {@code op}. */
    public static ReduceOp op(ReduceOp op, DataType type, int t, int ranks) {
        if (op != ReduceOp.AVG || type.isFloatingPoint()) {
            return op;
        }
        return t < ranks - 2 ? ReduceOp.SUM : ReduceOp.AVG;
    }

    /** The divisor of step {@code t} (see {@link RuntimeStream#reduce}). */
    public static int divisor(ReduceOp op, DataType type, int t, int ranks) {
        return op == ReduceOp.AVG && type.isFloatingPoint() && t > 0 ? -ranks : ranks;
    }
}
