package io.flexlink;

/**
 * NCCL's PreMulSum reduction, made by {@link Communicator#createPreMulSum(double, DataType)} (a scalar
 * fixed at creation, NCCL's {@code ncclScalarHostImmediate}) or
 * {@link Communicator#createPreMulSumOnDevice(long, DataType)} (a scalar in device memory read each time
 * a collective runs, {@code ncclScalarDevice}): every rank's input is multiplied by the scalar, rounded to
 * the element type, and the products are summed, as NCCL computes it.
 *
 * <p>An operation belongs to the communicator that made it and to one element type; a call on another
 * communicator or with another type, or after {@link #close()}, throws {@link FlexLinkException}
 * (INVALID_ARGUMENT) naming {@code op}, before anything is enqueued. Closing is {@code ncclRedOpDestroy}:
 * allowed as soon as the last call that used the operation returned (enqueued work keeps what it needs).
 */
public non-sealed interface PreMulSum extends Reduction, AutoCloseable {
    /** The element type the operation was made for. */
    DataType type();

    /** True when the scalar is read from device memory when each collective runs. */
    boolean onDevice();

    /** True once {@link #close()} ran. */
    boolean isClosed();

    /** Destroys the operation ({@code ncclRedOpDestroy}); a second close does nothing. */
    @Override
    void close();
}
