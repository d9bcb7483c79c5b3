package io.flexlink.comm;

import io.flexlink.FlexLinkException;
import io.flexlink.Registration;
import io.flexlink.Result;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The open registrations of one communicator ({@link io.flexlink.Communicator#register}) and how each is undone:
 * closing a handle removes it, then undoes what the communicator registered below it (the primary transport's
 * registration, or a multi-node communicator's with its node's communicator and rail); the communicator's close
 * or abort closes what is left, newest first, and refuses later registrations. Its monitor guards the list only:
 * the undoing runs outside it ({@link OpenHandles}), since it takes the communicator's call lock.
 */
final class Registrations {
    private static final Logger LOG = LoggerFactory.getLogger(Registrations.class);

    private final String owner;
    private final OpenHandles<Handle> open = new OpenHandles<>();

    Registrations(String owner) {
        this.owner = owner;
    }

    /**
     * Records a registration that {@code undo} reverses (null: nothing below registered). Primary means NCCL holds
     * it: {@code undo} is a registration that says so, or any other undoing (the primary transport's).
     */
    Registration add(long address, long bytes, AutoCloseable undo) {
        boolean withPrimary = undo instanceof Registration r ? r.withPrimary() : undo != null;
        Handle h = new Handle(address, bytes, undo, withPrimary);
        if (!open.add(h)) {
            h.close();
            throw new FlexLinkException(Result.INVALID_USAGE, owner + ": closed while the buffer was registered");
        }
        LOG.debug("INIT {}: registered {} B at 0x{} ({})", owner, bytes, Long.toHexString(address),
                withPrimary ? "with the primary transport too" : "FlexLink's record only");
        return h;
    }

    List<Registration> open() {
        return List.copyOf(open.open());
    }

    /** At the communicator's close or abort: every open registration, newest first; idempotent. */
    void closeAll() {
        List<Handle> left = open.closeAll();
        for (Handle h : left) {
            try {
                h.close();
            } catch (FlexLinkException e) {
                LOG.debug("INIT {}: deregistering 0x{} at close: {}", owner, Long.toHexString(h.address),
                        e.getMessage());
            }
        }
        if (!left.isEmpty()) {
            LOG.debug("INIT {}: {} registration(s) released with the communicator", owner, left.size());
        }
    }


    private final class Handle implements Registration {
        private final long address;
        private final long bytes;
        private final AutoCloseable undo;
        private final boolean withPrimary;
        private final AtomicBoolean closed = new AtomicBoolean();

        Handle(long address, long bytes, AutoCloseable undo, boolean withPrimary) {
            this.address = address;
            this.bytes = bytes;
            this.undo = undo;
            this.withPrimary = withPrimary;
        }

        @Override
        public long address() {
            return address;
        }

        @Override
        public long bytes() {
            return bytes;
        }

        @Override
        public boolean withPrimary() {
            return withPrimary;
        }

        @Override
        public boolean isClosed() {
            return closed.get();
        }

        /** Removed from the record first: a deregistration the transport refused leaves nothing to retry. */
        @Override
        public void close() {
            if (!closed.compareAndSet(false, true)) {
                return;
            }
            open.remove(this);
            if (undo == null) {
                return;
            }
            try {
                undo.close();
            } catch (FlexLinkException e) {
                throw e;
            } catch (Exception e) {
                throw new FlexLinkException(Result.INTERNAL_ERROR, owner + ": deregistering 0x"
                        + Long.toHexString(address) + " failed: " + e, e);
            }
        }

        @Override
        public String toString() {
            return "Registration[" + owner + ", " + bytes + " B at 0x" + Long.toHexString(address)
                    + (withPrimary ? ", with the primary transport" : "") + (isClosed() ? ", closed" : "") + "]";
        }
    }
}
