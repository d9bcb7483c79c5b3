package io.flexlink.comm;

import io.flexlink.DataType;
import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.SignalWait;
import io.flexlink.Stream;
import io.flexlink.Window;
import io.flexlink.launch.Groups;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.OneSided;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.validate.Validator;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The windows of one communicator ({@link io.flexlink.Communicator#registerWindow}) and its one-sided calls, checked
 * here and handed to NCCL ({@link OneSided}) through the communicator's {@link ParentCommunicator#oneSided} hook,
 * which holds its call lock. Every argument is checked before the refusal of a communicator without NCCL's path,
 * so that a wrong call reads the same on every backend, and before anything is enqueued.
 */
final class Windows {
    private final ParentCommunicator owner;
    private final OpenHandles<Handle> open = new OpenHandles<>();

    Windows(ParentCommunicator owner) {
        this.owner = owner;
    }

    Window register(long address, long bytes, int flags) {
        Handle h = owner.oneSided((backend, calls, whyNone) -> {
            Validator.checkRegistration(backend, address, bytes, owner.device());
            if (flags < 0) {
                throw invalid("flags: negative (" + flags + "); NCCL's are NCCL_WIN_*");
            }
            usable(calls, whyNone, "registerWindow");
            return new Handle(address, bytes, flags, calls.registerWindow(address, bytes, flags));
        });
        if (open.add(h)) {
            return h;
        }
        h.closed.set(true); // the communicator closed meanwhile, and NCCL's window with it
        throw new FlexLinkException(Result.INVALID_USAGE, who() + ": closed while the window was registered");
    }

    List<Window> open() {
        return List.copyOf(open.open());
    }

    void putSignal(long src, long count, DataType type, int peer, Window peerWindow, long peerOffset, int signal,
                   Stream stream) {
        owner.oneSided((backend, calls, whyNone) -> {
            if (count < 0) {
                throw invalid("count: negative (" + count + ")");
            }
            if (type == null) {
                throw invalid("type: null");
            }
            if (count > Long.MAX_VALUE / type.size()) {
                throw invalid("count: " + count + " elements of " + type + " pass the address space");
            }
            long bytes = count * type.size();
            if (count > 0 && src == 0) {
                throw invalid("src: NULL");
            }
            String p = count == 0 ? null : backend.accessProblem(src, bytes, owner.device());
            if (p != null) {
                throw invalid("src: " + p);
            }
            checkPeer(peer, "peer");
            Handle w = mine(peerWindow);
            if (peerOffset < 0 || peerOffset > w.bytes || bytes > w.bytes - peerOffset) {
                throw invalid("peerOffset: " + bytes + " bytes at " + peerOffset + " do not fit the window's "
                        + w.bytes);
            }
            checkSignal(signal, "signal");
            RuntimeStream rs = Validator.checkStream(backend, stream, owner.device());
            usable(calls, whyNone, "putSignal");
            calls.putSignal(src, count, type, peer, w.nccl, peerOffset, signal, rs);
            return null;
        });
    }

    void signal(int peer, int signal, Stream stream) {
        owner.oneSided((backend, calls, whyNone) -> {
            checkPeer(peer, "peer");
            checkSignal(signal, "signal");
            RuntimeStream rs = Validator.checkStream(backend, stream, owner.device());
            usable(calls, whyNone, "signal");
            calls.signal(peer, signal, rs);
            return null;
        });
    }

    void waitSignal(List<SignalWait> waits, Stream stream) {
        if (waits == null) {
            throw invalid("waits: null");
        }
        int n = waits.size();
        int[] peers = new int[n];
        int[] signals = new int[n];
        int[] counts = new int[n];
        owner.oneSided((backend, calls, whyNone) -> {
            for (int i = 0; i < n; i++) {
                SignalWait w = waits.get(i);
                if (w == null) {
                    throw invalid("waits[" + i + "]: null");
                }
                checkPeer(w.peer(), "waits[" + i + "].peer");
                checkSignal(w.signal(), "waits[" + i + "].signal");
                if (w.count() < 0) {
                    throw invalid("waits[" + i + "].count: negative (" + w.count() + ")");
                }
                peers[i] = w.peer();
                signals[i] = w.signal();
                counts[i] = w.count();
            }
            RuntimeStream rs = Validator.checkStream(backend, stream, owner.device());
            usable(calls, whyNone, "waitSignal");
            calls.waitSignal(peers, signals, counts, rs);
            return null;
        });
    }

    /**
     * At the communicator's close or abort, after its transports (NCCL frees its windows with its communicator):
     * every open window closed without NCCL; later registrations refused.
     */
    void closeAll() {
        for (Handle h : open.closeAll()) {
            h.closed.set(true);
        }
    }

    private String who() {
        return "rank " + owner.rank() + "/" + owner.size();
    }

    private void checkPeer(int peer, String name) {
        if (peer < 0 || peer >= owner.size()) {
            throw invalid(name + ": " + peer + " is not a rank of " + owner.size());
        }
    }

    private static void checkSignal(int signal, String name) {
        if (signal < 0) {
            throw invalid(name + ": negative (" + signal + ")");
        }
    }

    /** INVALID_USAGE inside a group (FlexLink launches a group's calls at its end, NCCL's ran now) or without NCCL. */
    private static void usable(OneSided calls, String whyNone, String call) {
        if (Groups.active()) {
            throw new FlexLinkException(Result.INVALID_USAGE, call + ": not inside a group (FlexLink launches a "
                    + "group's calls at its end; NCCL's one-sided calls and windows would run at once)");
        }
        if (calls == null) {
            throw new FlexLinkException(Result.INVALID_USAGE, call + " needs NCCL's path: this communicator has "
                    + "none (" + whyNone + ")");
        }
    }

    private Handle mine(Window w) {
        if (w == null) {
            throw invalid("peerWindow: null");
        }
        if (!(w instanceof Handle h) || h.windows() != this) {
            throw invalid("peerWindow: a window of another communicator");
        }
        if (h.isClosed()) {
            throw invalid("peerWindow: closed");
        }
        return h;
    }

    private static FlexLinkException invalid(String message) {
        return new FlexLinkException(Result.INVALID_ARGUMENT, message);
    }

    private final class Handle implements Window {
        private final long address;
        private final long bytes;
        private final int flags;
        /** NCCL's window handle; 0 where NCCL registered none (no symmetric memory there). */
        private final long nccl;
        private final AtomicBoolean closed = new AtomicBoolean();

        Handle(long address, long bytes, int flags, long nccl) {
            this.address = address;
            this.bytes = bytes;
            this.flags = flags;
            this.nccl = nccl;
        }

        Windows windows() {
            return Windows.this;
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
        public int flags() {
            return flags;
        }

        @Override
        public long userAddress() {
            if (closed.get()) {
                throw new FlexLinkException(Result.INVALID_USAGE, "window: closed");
            }
            return owner.oneSided((backend, calls, whyNone) -> calls.userAddress(nccl, address));
        }

        @Override
        public boolean isClosed() {
            return closed.get();
        }

        /** Removed from the record first: a deregistration NCCL refused leaves nothing to retry. */
        @Override
        public void close() {
            if (!closed.compareAndSet(false, true)) {
                return;
            }
            open.remove(this);
            owner.oneSided((backend, calls, whyNone) -> {
                calls.deregisterWindow(nccl);
                return null;
            });
        }

        @Override
        public String toString() {
            return "Window[" + who() + ", " + bytes + " B at 0x" + Long.toHexString(address) + ", flags " + flags
                    + (nccl == 0 ? ", NCCL registered none" : "") + (isClosed() ? ", closed" : "") + "]";
        }
    }
}
