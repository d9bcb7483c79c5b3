package io.flexlink.hier;

import io.flexlink.FlexLinkException;
import io.flexlink.Registration;
import java.util.function.UnaryOperator;

/**
 * What a multi-node communicator's registration registers below it: the buffer with the node's communicator
 * (whose primary path may be NCCL) and with the rail (an NCCL communicator across nodes on CUDA; the TCP rail
 * has no registration), since the stages of a call move the caller's buffers over both. Closing undoes the rail's
 * first, then the node's: the reverse of registering.
 */
final class HierRegistration implements Registration {
    private final long address;
    private final long bytes;
    /** Null on a node of one rank. */
    private final Registration intra;
    /** Null where the rail has no registration. */
    private final AutoCloseable rail;
    private volatile boolean closed;

    private HierRegistration(long address, long bytes, Registration intra, AutoCloseable rail) {
        this.address = address;
        this.bytes = bytes;
        this.intra = intra;
        this.rail = rail;
    }

    /** Registers with both; {@code guard} wraps the rail's undoing (the caller's call lock serializes the rail). */
    static HierRegistration register(HierRank h, long address, long bytes, UnaryOperator<AutoCloseable> guard) {
        Registration intra = h.intra == null ? null : h.intra.register(address, bytes);
        try {
            return new HierRegistration(address, bytes, intra, guard.apply(h.rail.register(address, bytes)));
        } catch (RuntimeException | Error e) {
            if (intra != null) {
                intra.close();
            }
            throw e;
        }
    }

    @Override
    public long address() {
        return address;
    }

    @Override
    public long bytes() {
        return bytes;
    }

    /** NCCL holds it where the rail is NCCL or the node communicator's primary path is. */
    @Override
    public boolean withPrimary() {
        return rail != null || intra != null && intra.withPrimary();
    }

    @Override
    public boolean isClosed() {
        return closed;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            if (rail != null) {
                rail.close();
            }
        } catch (FlexLinkException e) {
            throw e;
        } catch (Exception e) {
            throw new FlexLinkException(io.flexlink.Result.INTERNAL_ERROR, "the rail's deregistration failed: " + e, e);
        } finally {
            if (intra != null) {
                intra.close();
            }
        }
    }
}
