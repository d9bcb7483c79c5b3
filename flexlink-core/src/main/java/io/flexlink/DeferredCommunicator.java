package io.flexlink;

/**
 * The communicator {@link FlexLink#initRank} returns inside a group: a handle whose creation the group's
 * end completes ({@link GroupedInit}), as NCCL's {@code ncclCommInitRank} inside
 * {@code ncclGroupStart/ncclGroupEnd}. Until then {@link #rank()}, {@link #size()} and {@link #device()}
 * answer, {@link #getAsyncError()} is IN_PROGRESS and every other call is INVALID_USAGE; after a failed
 * creation they report its error. Once created, every call goes to the real communicator (one volatile
 * read more, nothing allocated).
 */
final class DeferredCommunicator implements Communicator {
    private final int rank;
    private final int size;
    private final int device;
    private volatile Communicator real;
    private volatile FlexLinkException failure;
    // guarded by this: close() or abort() came before the creation finished
    private boolean closeWhenMade;
    private boolean abortWhenMade;

    DeferredCommunicator(int rank, int size, int device) {
        this.rank = rank;
        this.size = size;
        this.device = device;
    }

    /** The group's end made it; a close or abort that came first is applied now. */
    void made(Communicator c) {
        boolean close;
        boolean abort;
        synchronized (this) {
            real = c;
            close = closeWhenMade;
            abort = abortWhenMade;
        }
        if (abort) {
            c.abort();
        }
        if (close) {
            c.close();
        }
    }

    void failed(FlexLinkException e) {
        failure = e;
    }

    private Communicator target() {
        Communicator c = real;
        if (c != null) {
            return c;
        }
        FlexLinkException f = failure;
        if (f != null) {
            throw new FlexLinkException(f.result(), "rank " + rank + ": its creation at groupEnd failed: " + f.detail(),
                    f);
        }
        throw new FlexLinkException(Result.INVALID_USAGE, "rank " + rank + " of " + size + " is created by the end of "
                + "the group it was made in (FlexLink.groupEnd); it cannot be used before");
    }

    @Override
    public int rank() {
        return rank;
    }

    @Override
    public int size() {
        return size;
    }

    @Override
    public int device() {
        return device;
    }

    @Override
    public void allReduce(Buffer send, Buffer recv, long count, DataType type, ReduceOp op, Stream stream) {
        target().allReduce(send, recv, count, type, op, stream);
    }

    @Override
    public void allReduce(long send, long recv, long count, DataType type, ReduceOp op, Stream stream) {
        target().allReduce(send, recv, count, type, op, stream);
    }

    @Override
    public void allGather(Buffer send, Buffer recv, long sendCount, DataType type, Stream stream) {
        target().allGather(send, recv, sendCount, type, stream);
    }

    @Override
    public void allGather(long send, long recv, long sendCount, DataType type, Stream stream) {
        target().allGather(send, recv, sendCount, type, stream);
    }

    @Override
    public void reduceScatter(Buffer send, Buffer recv, long recvCount, DataType type, ReduceOp op, Stream stream) {
        target().reduceScatter(send, recv, recvCount, type, op, stream);
    }

    @Override
    public void reduceScatter(long send, long recv, long recvCount, DataType type, ReduceOp op, Stream stream) {
        target().reduceScatter(send, recv, recvCount, type, op, stream);
    }

    @Override
    public void broadcast(Buffer send, Buffer recv, long count, DataType type, int root, Stream stream) {
        target().broadcast(send, recv, count, type, root, stream);
    }

    @Override
    public void broadcast(long send, long recv, long count, DataType type, int root, Stream stream) {
        target().broadcast(send, recv, count, type, root, stream);
    }

    @Override
    public void reduce(Buffer send, Buffer recv, long count, DataType type, ReduceOp op, int root, Stream stream) {
        target().reduce(send, recv, count, type, op, root, stream);
    }

    @Override
    public void reduce(long send, long recv, long count, DataType type, ReduceOp op, int root, Stream stream) {
        target().reduce(send, recv, count, type, op, root, stream);
    }

    @Override
    public PreMulSum createPreMulSum(double scalar, DataType type) {
        return target().createPreMulSum(scalar, type);
    }

    @Override
    public PreMulSum createPreMulSum(long scalar, DataType type) {
        return target().createPreMulSum(scalar, type);
    }

    @Override
    public PreMulSum createPreMulSumOnDevice(long scalar, DataType type) {
        return target().createPreMulSumOnDevice(scalar, type);
    }

    @Override
    public void allReduce(Buffer send, Buffer recv, long count, DataType type, Reduction op, Stream stream) {
        target().allReduce(send, recv, count, type, op, stream);
    }

    @Override
    public void allReduce(long send, long recv, long count, DataType type, Reduction op, Stream stream) {
        target().allReduce(send, recv, count, type, op, stream);
    }

    @Override
    public void reduceScatter(Buffer send, Buffer recv, long recvCount, DataType type, Reduction op, Stream stream) {
        target().reduceScatter(send, recv, recvCount, type, op, stream);
    }

    @Override
    public void reduceScatter(long send, long recv, long recvCount, DataType type, Reduction op, Stream stream) {
        target().reduceScatter(send, recv, recvCount, type, op, stream);
    }

    @Override
    public void reduce(Buffer send, Buffer recv, long count, DataType type, Reduction op, int root, Stream stream) {
        target().reduce(send, recv, count, type, op, root, stream);
    }

    @Override
    public void reduce(long send, long recv, long count, DataType type, Reduction op, int root, Stream stream) {
        target().reduce(send, recv, count, type, op, root, stream);
    }

    @Override
    public void allToAll(Buffer send, Buffer recv, long count, DataType type, Stream stream) {
        target().allToAll(send, recv, count, type, stream);
    }

    @Override
    public void allToAll(long send, long recv, long count, DataType type, Stream stream) {
        target().allToAll(send, recv, count, type, stream);
    }

    @Override
    public void gather(Buffer send, Buffer recv, long count, DataType type, int root, Stream stream) {
        target().gather(send, recv, count, type, root, stream);
    }

    @Override
    public void gather(long send, long recv, long count, DataType type, int root, Stream stream) {
        target().gather(send, recv, count, type, root, stream);
    }

    @Override
    public void scatter(Buffer send, Buffer recv, long count, DataType type, int root, Stream stream) {
        target().scatter(send, recv, count, type, root, stream);
    }

    @Override
    public void scatter(long send, long recv, long count, DataType type, int root, Stream stream) {
        target().scatter(send, recv, count, type, root, stream);
    }

    @Override
    public void send(Buffer buff, long count, DataType type, int peer, Stream stream) {
        target().send(buff, count, type, peer, stream);
    }

    @Override
    public void send(long buff, long count, DataType type, int peer, Stream stream) {
        target().send(buff, count, type, peer, stream);
    }

    @Override
    public void recv(Buffer buff, long count, DataType type, int peer, Stream stream) {
        target().recv(buff, count, type, peer, stream);
    }

    @Override
    public void recv(long buff, long count, DataType type, int peer, Stream stream) {
        target().recv(buff, count, type, peer, stream);
    }

    @Override
    public void allToAllv(long send, long[] sendCounts, long[] sendDispls, long recv, long[] recvCounts,
                          long[] recvDispls, DataType type, Stream stream) {
        target().allToAllv(send, sendCounts, sendDispls, recv, recvCounts, recvDispls, type, stream);
    }

    @Override
    public java.util.Optional<Communicator> split(int color, int key) {
        return target().split(color, key);
    }

    @Override
    public java.util.Optional<Communicator> shrink(int[] excluded, boolean abortFirst) {
        return target().shrink(excluded, abortFirst);
    }

    @Override
    public UniqueId growId() {
        return target().growId();
    }

    @Override
    public Communicator grow(int nRanks, UniqueId id) {
        return target().grow(nRanks, id);
    }

    @Override
    public void finalizeComm() {
        target().finalizeComm();
    }

    @Override
    public void revoke() {
        target().revoke();
    }

    @Override
    public Result getAsyncError() {
        Communicator c = real;
        if (c != null) {
            return c.getAsyncError();
        }
        FlexLinkException f = failure;
        return f != null ? f.result() : Result.IN_PROGRESS;
    }

    /** The real communicator's: before the group's end made it, INVALID_USAGE like every call. */
    @Override
    public Registration register(long address, long bytes) {
        return target().register(address, bytes);
    }

    @Override
    public java.util.List<Registration> registrations() {
        Communicator c = real;
        return c != null ? c.registrations() : java.util.List.of();
    }

    /** The real communicator's windows and one-sided calls: before the group's end made it, INVALID_USAGE. */
    @Override
    public Window registerWindow(long address, long bytes, int flags) {
        return target().registerWindow(address, bytes, flags);
    }

    @Override
    public java.util.List<Window> windows() {
        Communicator c = real;
        return c != null ? c.windows() : java.util.List.of();
    }

    @Override
    public void putSignal(long src, long count, DataType type, int peer, Window peerWindow, long peerOffset,
                          int signal, Stream stream) {
        target().putSignal(src, count, type, peer, peerWindow, peerOffset, signal, stream);
    }

    @Override
    public void signal(int peer, int signal, Stream stream) {
        target().signal(peer, signal, stream);
    }

    @Override
    public void waitSignal(java.util.List<SignalWait> waits, Stream stream) {
        target().waitSignal(waits, stream);
    }

    @Override
    public CommStats stats() {
        return target().stats();
    }

    @Override
    public void abort() {
        Communicator c;
        synchronized (this) {
            c = real;
            abortWhenMade |= c == null;
        }
        if (c != null) {
            c.abort();
        }
    }

    @Override
    public void close() {
        Communicator c;
        synchronized (this) {
            c = real;
            closeWhenMade |= c == null;
        }
        if (c != null) {
            c.close();
        }
    }

    @Override
    public String toString() {
        Communicator c = real;
        return c != null ? c.toString() : "DeferredCommunicator[rank " + rank + "/" + size + ", device " + device
                + (failure != null ? ", failed]" : ", created at groupEnd]");
    }
}
