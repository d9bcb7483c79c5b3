package io.flexlink;

import java.util.Optional;

/**
 * One rank of a communicator, with NCCL's collectives in NCCL's argument order and semantics. Every
 * collective enqueues onto {@code stream} and returns without waiting for the device. Counts are in
 * elements. In-place operation follows NCCL: AllReduce, Broadcast and Reduce when {@code send == recv};
 * AllGather when {@code send == recv + rank * count}; ReduceScatter when {@code recv == send + rank * count}
 * (offsets in elements).
 *
 * <p>Bad arguments throw {@link FlexLinkException} with {@link Result#INVALID_ARGUMENT} (or
 * {@link Result#INVALID_USAGE} for a closed or aborted communicator) before anything is enqueued.
 * The {@link Buffer} overloads also check counts against buffer sizes; the address overloads, like NCCL,
 * cannot. Where the backend knows its memory (the host backend, whose device memory is process memory),
 * both also check that the bytes a call touches lie in one live allocation of the communicator's device:
 * a freed or foreign address is INVALID_ARGUMENT, never a crash.
 *
 * <p>Threads: calls from two threads at once are serialized (the calls of each rank must still come in the
 * same order on every rank); different communicators are independent. {@link #getAsyncError()} never
 * blocks and {@link #abort()} is safe from any thread.
 *
 * <p>Errors, like NCCL's: an error of enqueued work is asynchronous. {@link #getAsyncError()} reports the
 * first one (the failed stream's result, or REMOTE_ERROR when another rank aborted or the watchdog of
 * {@code flexlink.timeout}, on by default, found a call overdue); once it was seen, every rank of the communicator is told
 * (their waits return and they report REMOTE_ERROR), and every later collective on this rank throws a
 * {@link FlexLinkException} with that result, enqueuing nothing. See docs/operations.md.
 */
public interface Communicator extends AutoCloseable {
    /** The color of a rank that takes no part in any child of {@link #split} ({@code NCCL_SPLIT_NOCOLOR}). */
    int SPLIT_NOCOLOR = -1;

    /** This rank, in {@code [0, size)}. */
    int rank();

    /** Number of ranks. */
    int size();

    /** The device this rank's buffers and streams live on. */
    int device();

    /** {@code recv[i] = op over ranks of send[i]} for {@code count} elements. */
    void allReduce(Buffer send, Buffer recv, long count, DataType type, ReduceOp op, Stream stream);

    void allReduce(long send, long recv, long count, DataType type, ReduceOp op, Stream stream);

    /** Every rank's {@code sendCount} elements, in rank order, into {@code recv} ({@code size * sendCount} elements). */
    void allGather(Buffer send, Buffer recv, long sendCount, DataType type, Stream stream);

    void allGather(long send, long recv, long sendCount, DataType type, Stream stream);

    /** Block {@code rank} of the reduction of every rank's {@code send} ({@code size * recvCount} elements) into {@code recv}. */
    void reduceScatter(Buffer send, Buffer recv, long recvCount, DataType type, ReduceOp op, Stream stream);

    void reduceScatter(long send, long recv, long recvCount, DataType type, ReduceOp op, Stream stream);

    /** Root's {@code send} into every rank's {@code recv}; {@code send} is read on the root only. */
    void broadcast(Buffer send, Buffer recv, long count, DataType type, int root, Stream stream);

    void broadcast(long send, long recv, long count, DataType type, int root, Stream stream);

    /** The reduction of every rank's {@code send} into the root's {@code recv}; {@code recv} is written on the root only. */
    void reduce(Buffer send, Buffer recv, long count, DataType type, ReduceOp op, int root, Stream stream);

    void reduce(long send, long recv, long count, DataType type, ReduceOp op, int root, Stream stream);

    /**
     * A {@link PreMulSum} of this communicator ({@code ncclRedOpCreatePreMulSum} with
     * {@code ncclScalarHostImmediate}): {@code scalar} is rounded to {@code type} now (integers truncate and
     * saturate, floating-point types round to nearest even), and every call multiplies each rank's input by
     * that value. Every rank makes its own; the ranks may use different scalars, as in NCCL.
     *
     * @throws FlexLinkException INVALID_ARGUMENT for a null type, INVALID_USAGE on a closed communicator
     */
    PreMulSum createPreMulSum(double scalar, DataType type);

    /**
     * {@link #createPreMulSum(double, DataType)} with an integer scalar, exact for every integer type: they take
     * its low {@code 8 * type.size()} bits (a C cast; a UINT64 scalar may be passed as its bit pattern), and
     * floating-point types its value rounded to nearest even.
     */
    PreMulSum createPreMulSum(long scalar, DataType type);

    /**
     * A {@link PreMulSum} whose scalar is one element of {@code type} in this rank's device memory at
     * {@code scalar} ({@code ncclScalarDevice}): it is read when each collective runs, so a value written
     * there between calls (in stream order) takes effect. The memory must stay valid while calls use it.
     *
     * @throws FlexLinkException INVALID_ARGUMENT for a null type or address, or an address the backend knows
     *                           is not device memory of this rank; INVALID_USAGE on a closed communicator
     */
    PreMulSum createPreMulSumOnDevice(long scalar, DataType type);

    /** {@link #allReduce(long, long, long, DataType, ReduceOp, Stream)} with a built-in operation or a PreMulSum. */
    void allReduce(Buffer send, Buffer recv, long count, DataType type, Reduction op, Stream stream);

    void allReduce(long send, long recv, long count, DataType type, Reduction op, Stream stream);

    /** {@link #reduceScatter(long, long, long, DataType, ReduceOp, Stream)} with any {@link Reduction}. */
    void reduceScatter(Buffer send, Buffer recv, long recvCount, DataType type, Reduction op, Stream stream);

    void reduceScatter(long send, long recv, long recvCount, DataType type, Reduction op, Stream stream);

    /** {@link #reduce(long, long, long, DataType, ReduceOp, int, Stream)} with any {@link Reduction}. */
    void reduce(Buffer send, Buffer recv, long count, DataType type, Reduction op, int root, Stream stream);

    void reduce(long send, long recv, long count, DataType type, Reduction op, int root, Stream stream);

    /** Block {@code j} ({@code count} elements) of every rank's {@code send} to rank {@code j}'s block of its {@code recv}. */
    void allToAll(Buffer send, Buffer recv, long count, DataType type, Stream stream);

    void allToAll(long send, long recv, long count, DataType type, Stream stream);

    /** Every rank's {@code count} elements, in rank order, into the root's {@code recv} ({@code size * count} elements). */
    void gather(Buffer send, Buffer recv, long count, DataType type, int root, Stream stream);

    void gather(long send, long recv, long count, DataType type, int root, Stream stream);

    /** Block {@code r} of the root's {@code send} ({@code size * count} elements) into rank {@code r}'s {@code recv}. */
    void scatter(Buffer send, Buffer recv, long count, DataType type, int root, Stream stream);

    void scatter(long send, long recv, long count, DataType type, int root, Stream stream);

    /**
     * {@code count} elements of {@code buff} to {@code peer}, which receives them with {@link #recv}. Outside a
     * group a send waits for its receive (like NCCL, pair them inside {@code FlexLink.groupStart/groupEnd} to
     * exchange both ways); inside a group any pattern of pairs runs together.
     */
    void send(Buffer buff, long count, DataType type, int peer, Stream stream);

    void send(long buff, long count, DataType type, int peer, Stream stream);

    /** {@code count} elements from {@code peer}'s {@link #send} into {@code buff}. */
    void recv(Buffer buff, long count, DataType type, int peer, Stream stream);

    void recv(long buff, long count, DataType type, int peer, Stream stream);

    /**
     * AlltoAllv on grouped send/recv (uneven splits, as mixture-of-experts layers need): {@code sendCounts[j]}
     * elements at {@code send + sendDispls[j]} (in elements) to rank {@code j}, {@code recvCounts[p]} elements
     * from rank {@code p} to {@code recv + recvDispls[p]}; every rank's send count to {@code j} must equal
     * {@code j}'s receive count from it. One group (nested in the caller's, if any).
     */
    void allToAllv(long send, long[] sendCounts, long[] sendDispls, long recv, long[] recvCounts,
                   long[] recvDispls, DataType type, Stream stream);

    /**
     * The first error of work already enqueued (like {@code ncclCommGetAsyncError}): SUCCESS while
     * everything is fine; never blocks. Finding an error here also tells the other ranks. After
     * {@link #abort()} without an earlier error: REMOTE_ERROR.
     */
    Result getAsyncError();

    /**
     * Like {@code ncclCommSplit}: a child communicator of the ranks that pass the same {@code color}, ranked
     * by {@code key} and then by their rank here; {@link Optional#empty()} for {@link #SPLIT_NOCOLOR} (NCCL
     * returns a NULL communicator there). Collective and blocking: every rank of this communicator calls it,
     * each from its own thread and outside any group; it returns once the child is built on every member
     * (each round waits at most {@code flexlink.initTimeout} for the other ranks, then fails with REMOTE_ERROR
     * naming those missing). The child is a full communicator of its own over its ranks (their own paths,
     * staging and balancer), on the same backend and devices, with this communicator's
     * configuration. After creation it is independent of this one: closing or aborting either leaves the
     * other working, so they may be closed in any order, and each must be closed.
     *
     * @throws FlexLinkException INVALID_ARGUMENT naming {@code color} when any rank passed a color below
     *         {@link #SPLIT_NOCOLOR} (every rank throws), INVALID_USAGE on a closed, aborted or finalized
     *         communicator (a {@link #revoke() revoked} one may split) or inside a group, or the error that ended
     *         the child's creation on any member
     */
    Optional<Communicator> split(int color, int key);

    /**
     * Like {@code ncclCommShrink}: a child of every rank not in {@code excluded}, ranked in their order here
     * (the gaps closed); {@link Optional#empty()} on an excluded rank. Built on {@link #split}: collective
     * over every rank of this communicator, <b>the excluded ranks too</b> (they pass the same list and get no
     * child; unlike NCCL, whose excluded ranks may be gone, FlexLink's rendezvous has no round among a subset),
     * each from its own thread, outside any group; the child is a full communicator, independent of this one.
     * Allowed on a usable or a {@link #revoke() revoked} communicator.
     *
     * @param excluded   the ranks left out; the same ranks (in any order) on every rank
     * @param abortFirst NCCL_SHRINK_ABORT: first stop this communicator's work in flight ({@link #revoke()}
     *                   unless it was revoked already), so that a call stuck on a failed peer cannot hold up the
     *                   shrink
     * @throws FlexLinkException INVALID_ARGUMENT naming {@code excluded} (null, empty, a rank out of range or
     *         twice, every rank, or different lists on different ranks: every rank throws), INVALID_USAGE on a
     *         closed, aborted or finalized communicator or inside a group, or what ended the child's creation
     */
    Optional<Communicator> shrink(int[] excluded, boolean abortFirst);

    /** {@link #shrink(int[], boolean)} without stopping the work in flight (NCCL_SHRINK_DEFAULT). */
    default Optional<Communicator> shrink(int[] excluded) {
        return shrink(excluded, false);
    }

    /**
     * Like {@code ncclCommFinalize}: waits until this rank's enqueued work is done (its part of the peers'
     * work included, as {@link #close()} waits), then frees every resource but the handle. Afterwards only
     * {@link #close()} is allowed: collectives, split and shrink throw INVALID_USAGE, finalizeComm and revoke
     * INVALID_ARGUMENT (as NCCL's double finalize); {@link #getAsyncError()} is SUCCESS. Blocking; outside any
     * group (the facade's ncclCommFinalize defers it to the group's end, as NCCL does).
     *
     * @throws FlexLinkException INVALID_ARGUMENT when already finalized or revoked, INVALID_USAGE on a closed
     *         or aborted communicator or inside a group, the communicator's error when it failed (before or
     *         while its work drained)
     */
    void finalizeComm();

    /**
     * Like {@code ncclCommRevoke}: stops this communicator's work in flight (every stream blocked in one of its
     * collectives, here and at the peers, is released; the data of unfinished calls is garbage; the peers see
     * REMOTE_ERROR as after an abort and should revoke too), frees its paths, and keeps its ranks' rendezvous
     * so that {@link #split} and {@link #shrink} can still make a child. Afterwards collectives throw
     * INVALID_USAGE, finalizeComm and a second revoke INVALID_ARGUMENT; {@link #getAsyncError()} is
     * IN_PROGRESS until every stream left the communicator, then SUCCESS. Allowed after an abort or an error
     * (that is what it is for). Safe from any thread.
     *
     * @throws FlexLinkException INVALID_ARGUMENT when already revoked or finalized, INVALID_USAGE when closed
     */
    void revoke();

    /**
     * Like {@code ncclCommGetUniqueId}: a fresh id for {@link #grow}, which ranks in any process of this machine
     * may join (as {@link FlexLink#getUniqueIdForProcesses}); called on the grow's root only. One at a time: a
     * second call before a grow consumed the first throws INVALID_USAGE, as NCCL's.
     */
    UniqueId growId();

    /**
     * Like {@code ncclCommGrow} on an existing rank: a new communicator of {@code nRanks} ranks in which every
     * rank of this one keeps its rank, and the new ranks, {@code [size(), nRanks)}, join with
     * {@link FlexLink#initRank initRank(nRanks, id, rank, device)} (the facade's ncclCommGrow with a NULL comm).
     * Collective over every rank of this communicator, each from its own thread, outside any group: the root
     * passes the id of its {@link #growId()} (which the grow consumes), the others null, and one round here
     * hands it to them. This communicator is unchanged (close it when done); the new one is independent of it.
     *
     * @throws FlexLinkException INVALID_ARGUMENT naming {@code nRanks} (not more than {@code size()}) or
     *         {@code uniqueId} (no rank or two ranks passed one: every rank throws), INVALID_USAGE as split, or
     *         what ended the new communicator's creation
     */
    Communicator grow(int nRanks, UniqueId id);

    /**
     * Like {@code ncclCommRegister}: registers {@code bytes} bytes of this rank's device memory at {@code address}
     * with this communicator (and with NCCL, where NCCL is its primary path), until the returned handle is closed
     * or the communicator is. Local to this rank (no other rank takes part); overlapping and identical ranges may
     * be registered, each with a handle of its own, as in NCCL. See {@link Registration}.
     *
     * @throws FlexLinkException INVALID_ARGUMENT naming {@code address} (NULL, or memory the backend knows is not
     *         this rank's device memory) or {@code bytes} (not positive, or past the end of the address space);
     *         INVALID_USAGE on a closed, aborted, finalized or revoked communicator; NCCL's error where it refused
     */
    Registration register(long address, long bytes);

    /** The registrations of this communicator still open, oldest first (empty once it is closed). */
    java.util.List<Registration> registrations();

    /**
     * Like {@code ncclCommWindowRegister}: registers {@code bytes} bytes of this rank's device memory at
     * {@code address} as a window of this communicator, the target of the peers' {@link #putSignal}. Collective
     * over the ranks (every rank registers its window, of the same size by default, each from its own thread and
     * outside any group); {@code flags} are NCCL's {@code NCCL_WIN_*}. Handed to NCCL, so only a communicator whose
     * primary path is NCCL (one rank per GPU on CUDA, one node) has windows. See {@link Window}.
     *
     * @throws FlexLinkException INVALID_ARGUMENT naming {@code address}, {@code bytes} (as {@link #register}) or
     *         {@code flags} (negative); INVALID_USAGE where the communicator has no NCCL path (saying why), inside a
     *         group, or on a closed, aborted, finalized or revoked communicator; NCCL's error where it refused
     */
    Window registerWindow(long address, long bytes, int flags);

    /** The windows of this communicator still open, oldest first (empty once it is closed). */
    java.util.List<Window> windows();

    /**
     * Like {@code ncclPutSignal}: copies {@code count} elements of {@code type} at {@code src} (this rank's device
     * memory) into {@code peer}'s part of {@code peerWindow}, {@code peerOffset} bytes in, then increments the peer's
     * signal {@code signal}; enqueued on {@code stream}, like every call. {@code peerWindow} is this rank's handle of
     * the window the ranks registered together.
     *
     * @throws FlexLinkException INVALID_ARGUMENT naming the argument: {@code src} (NULL with a count, or not this
     *         rank's memory), {@code count} (negative), {@code type} (null), {@code peer} (not a rank), {@code
     *         peerWindow} (null, closed, or another communicator's), {@code peerOffset} (negative, or the elements
     *         past the window's end), {@code signal} (negative), {@code stream}; INVALID_USAGE as
     *         {@link #registerWindow}; NCCL's error where it refused. Nothing is enqueued on a refusal.
     */
    void putSignal(long src, long count, DataType type, int peer, Window peerWindow, long peerOffset, int signal,
                   Stream stream);

    /** Like {@code ncclSignal}: increments {@code peer}'s signal {@code signal}, no data; checked as {@link #putSignal}. */
    void signal(int peer, int signal, Stream stream);

    /**
     * Like {@code ncclWaitSignal}: {@code stream} waits until each of {@code waits} has happened (see
     * {@link SignalWait}); the host does not wait. Checked as {@link #putSignal}, each wait's {@code peer},
     * {@code signal} and {@code count} (not negative) named with its index.
     */
    void waitSignal(java.util.List<SignalWait> waits, Stream stream);

    /** {@link #waitSignal(java.util.List, Stream)} of the given waits. */
    default void waitSignal(Stream stream, SignalWait... waits) {
        if (waits == null) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "waits: null");
        }
        for (int i = 0; i < waits.length; i++) {
            if (waits[i] == null) {
                throw new FlexLinkException(Result.INVALID_ARGUMENT, "waits[" + i + "]: null");
            }
        }
        waitSignal(java.util.List.of(waits), stream);
    }

    /** Statistics: bytes and time per path, shares per size bucket, tuning history. */
    CommStats stats();

    /**
     * Stops the communicator on every rank: every stream blocked in one of its collectives, here and at the
     * peers, is released (the data of unfinished calls is garbage), its resources are freed without
     * waiting for the peers (its ranks' rendezvous connections stay until {@link #close()}, so that a
     * {@link #revoke()} may still lead to a split), and later calls fail with INVALID_USAGE (or with the error
     * that caused the abort). Memory that a stream which never returns still uses is freed by {@link #close()} once it
     * returned. Safe from any thread; idempotent.
     */
    void abort();

    /**
     * Waits for this communicator's own enqueued work, then frees its resources; idempotent. Like
     * {@code ncclCommDestroy} it waits for the peers' part of that work: when a peer may be gone, abort()
     * (the watchdog of {@code flexlink.timeout}, on by default, aborts a wait that never ends).
     */
    @Override
    void close();
}
