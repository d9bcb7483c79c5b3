package io.flexlink;

/**
 * What a reducing collective computes: one of NCCL's built-in operations ({@link ReduceOp}) or a
 * {@link PreMulSum} made by a communicator ({@code ncclRedOpCreatePreMulSum}). The collectives of
 * {@link Communicator} take either; the {@code ReduceOp} overloads are the same calls.
 */
public sealed interface Reduction permits ReduceOp, PreMulSum {
}
