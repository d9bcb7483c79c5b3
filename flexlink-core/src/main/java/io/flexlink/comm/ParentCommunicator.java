package io.flexlink.comm;

import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.PreMulSum;
import io.flexlink.Registration;
import io.flexlink.SignalWait;
import io.flexlink.Stream;
import io.flexlink.UniqueId;
import io.flexlink.Window;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.OneSided;
import io.flexlink.validate.CollectiveApi;
import io.flexlink.validate.Validator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.locks.Lock;

/**
 * The calls that make a child of a communicator (split, shrink, grow and grow's id), once for the single-node
 * and the multi-node communicator: each checks the parent's state through the subclass, then runs the
 * {@link CommSplitter}'s rounds over the parent's rendezvous. Also the buffer registrations of both
 * ({@link Registrations}): the subclass registers below ({@link #registerBelow}), this class keeps the handles;
 * and the windows and one-sided calls of both ({@link Windows}), through the subclass's {@link #oneSided} hook.
 */
public abstract class ParentCommunicator extends CollectiveApi {
    protected final CommSplitter splitter;
    private final Registrations registrations;
    /** Where a device scalar of a PreMulSum must live. */
    private final Backend scalars;
    private final Windows windows = new Windows(this);

    protected ParentCommunicator(int rank, int size, int device, CommSplitter splitter, Backend backend) {
        super(rank, size, device);
        this.splitter = splitter;
        this.registrations = new Registrations("rank " + rank + "/" + size);
        this.scalars = backend;
    }

    /**
     * Under the subclass's call lock: checks its state and the range ({@link Validator#checkRegistration}), then
     * registers with what carries the calls. Returns what undoes that (taking the call lock itself, see
     * {@link #underLock}; a {@link Registration} when it knows whether NCCL holds the buffer), or null when
     * nothing below registered.
     */
    protected abstract AutoCloseable registerBelow(long address, long bytes);

    @Override
    public final Registration register(long address, long bytes) {
        checkNotClosed();
        return registrations.add(address, bytes, registerBelow(address, bytes));
    }

    @Override
    public final List<Registration> registrations() {
        return registrations.open();
    }

    /**
     * Runs {@code call} under the call lock once the state allows calls, with the backend and NCCL's one-sided
     * calls of this rank, or null and why there are none (the host ring, no primary path, several nodes).
     */
    protected abstract <T> T oneSided(OneSided.Call<T> call);

    @Override
    public final Window registerWindow(long address, long bytes, int flags) {
        checkNotClosed();
        return windows.register(address, bytes, flags);
    }

    @Override
    public final List<Window> windows() {
        return windows.open();
    }

    @Override
    public final void putSignal(long src, long count, DataType type, int peer, Window peerWindow, long peerOffset,
                                int signal, Stream stream) {
        checkNotClosed();
        windows.putSignal(src, count, type, peer, peerWindow, peerOffset, signal, stream);
    }

    @Override
    public final void signal(int peer, int signal, Stream stream) {
        checkNotClosed();
        windows.signal(peer, signal, stream);
    }

    @Override
    public final void waitSignal(List<SignalWait> waits, Stream stream) {
        checkNotClosed();
        windows.waitSignal(waits, stream);
    }

    /**
     * At close and abort, after the transports were closed or aborted (which freed NCCL's registrations and
     * windows): the windows, then the registrations.
     */
    protected final void closeRegistrations() {
        windows.closeAll();
        registrations.closeAll();
    }

    /** {@code undo} run under {@code lock} (a transport's communicator is used by one thread at a time); null stays null. */
    protected static AutoCloseable underLock(Lock lock, AutoCloseable undo) {
        if (undo == null) {
            return null;
        }
        return () -> {
            lock.lock();
            try {
                undo.close();
            } finally {
                lock.unlock();
            }
        };
    }

    // ---- PreMulSum: one kind of operation for both communicators, each of which scales its inputs itself ----

    @Override
    public PreMulSum createPreMulSum(double scalar, DataType type) {
        checkNotClosed();
        return PreMulSumOp.host(this, scalar, type);
    }

    @Override
    public PreMulSum createPreMulSum(long scalar, DataType type) {
        checkNotClosed();
        return PreMulSumOp.host(this, scalar, type);
    }

    @Override
    public PreMulSum createPreMulSumOnDevice(long scalar, DataType type) {
        checkNotClosed();
        return PreMulSumOp.device(this, scalar, type, scalars, device);
    }

    /**
     * Refuses (INVALID_ARGUMENT naming {@code op}) an operation of another communicator, a destroyed one, one
     * made for another type, or a device scalar that is no longer live memory of this rank's device.
     */
    protected final PreMulSumOp checkPreMulSum(PreMulSum op, DataType type) {
        return PreMulSumOp.check(op, this, type, scalars, device);
    }

    /** A checked operation's host scalar as raw bits of its type (unused where {@link #preMulSumAddress} is not 0). */
    protected static long preMulSumBits(PreMulSum op) {
        return ((PreMulSumOp) op).bits();
    }

    /** A checked operation's device scalar, or 0 for a host scalar. */
    protected static long preMulSumAddress(PreMulSum op) {
        return ((PreMulSumOp) op).address();
    }

    /** Throws unless this communicator may make a child now (a revoked one may, where its rendezvous lives). */
    protected abstract void checkSplittable();

    /** NCCL_SHRINK_ABORT: stops the work in flight first (a revoke), or refuses where that is impossible. */
    protected abstract void stopBeforeShrink();

    /** Checked like a call (under the subclass's lock), then split outside it: the split waits for the other ranks. */
    @Override
    public Optional<Communicator> split(int color, int key) {
        checkSplittable();
        return splitter.split(color, key);
    }

    /** A split with one color for the ranks kept ({@link CommSplitter#shrink}); the list is checked before anything. */
    @Override
    public Optional<Communicator> shrink(int[] excluded, boolean abortFirst) {
        checkNotClosed();
        Validator.checkExcluded(excluded, size); // before the revoke: a refused call changes nothing
        if (abortFirst) {
            stopBeforeShrink();
        }
        checkSplittable();
        return splitter.shrink(excluded, size);
    }

    @Override
    public UniqueId growId() {
        checkSplittable();
        return splitter.growId();
    }

    @Override
    public Communicator grow(int nRanks, UniqueId id) {
        checkSplittable();
        return splitter.grow(nRanks, id, size);
    }
}
