package io.flexlink.cuda;

import io.flexlink.Collective;
import java.nio.IntBuffer;
import org.bytedeco.cuda.cudart.CUstream_st;
import org.bytedeco.cuda.nccl.ncclComm;
import org.bytedeco.cuda.nccl.ncclConfig_t;
import org.bytedeco.cuda.nccl.ncclSimInfo_t;
import org.bytedeco.cuda.nccl.ncclUniqueId;
import org.bytedeco.cuda.nccl.ncclWaitSignalDesc_t;
import org.bytedeco.cuda.nccl.ncclWindow_vidmem;
import org.bytedeco.javacpp.BytePointer;
import org.bytedeco.javacpp.IntPointer;
import org.bytedeco.javacpp.Pointer;
import org.bytedeco.javacpp.PointerPointer;

/**
 * A drop-in for {@code org.bytedeco.cuda.global.nccl}: the same static methods with the same
 * signatures and constants, backed by FlexLink communicators on the CUDA backend. A program written
 * with {@code import static org.bytedeco.cuda.global.nccl.*;} compiles and runs unchanged with
 * {@code import static io.flexlink.cuda.FlexNccl.*;}. docs/migration.md says what differs.
 *
 * <p>Every method returns an {@code ncclResult_t} code and never throws: FlexLink's errors carry NCCL's
 * codes; anything unexpected is {@link #ncclInternalError}, logged. A communicator is a handle into
 * a table (the user's {@link ncclComm} gets a non-dereferenceable handle value as its address).
 * Buffers are {@code address() + position()} bytes, exactly what bytedeco passes for a {@code void*}.
 * Steady-state collectives allocate nothing. NCCL's version, result, operation and type constants are declared in
 * {@link FlexNcclConstants}, the allocator, registration and suspension in {@link FlexNcclMemory}, the parameter
 * functions in {@link FlexNcclParams}: this class extends them, so that {@code FlexNccl.ncclFloat},
 * {@code FlexNccl.ncclMemAlloc} and the static import of {@code FlexNccl.*} find them as bytedeco's.
 */
@SuppressWarnings("rawtypes")
public final class FlexNccl extends FlexNcclMemory {
    private FlexNccl() {
    }

    // ---- version, ids, errors ----

    public static int ncclGetVersion(IntPointer version) {
        return FacadeInfo.version(version);
    }
    public static int ncclGetVersion(IntBuffer version) {
        return FacadeInfo.version(version);
    }

    /** The version of the NCCL library underneath (FlexLink follows its semantics). */
    public static int ncclGetVersion(int[] version) {
        return FacadeInfo.version(version);
    }

    /**
     * A fresh 128-byte id that ranks in any process of this machine may join, rank 0's included: a lobby on
     * loopback, or {@code FLEXLINK_COMM_ID=host:port} (docs/migration.md says when it closes).
     */
    public static int ncclGetUniqueId(ncclUniqueId uniqueId) {
        return FacadeInfo.uniqueId(uniqueId);
    }

    /** FlexLink's text for each result code (a cached native string, like NCCL's static ones). */
    public static BytePointer ncclGetErrorString(int result) {
        return FacadeInfo.errorString(result);
    }

    // ---- communicators ----

    public static int ncclCommInitRank(ncclComm comm, int nranks, ncclUniqueId commId, int rank) {
        return FacadeInit.initRankConfig(comm, nranks, commId, rank, null);
    }
    public static int ncclCommInitRank(PointerPointer comm, int nranks, ncclUniqueId commId, int rank) {
        return FacadeInit.initRankConfig(comm, nranks, commId, rank, null);
    }

    /** With one {@link ncclComm} object only {@code ndev == 1} is meaningful; use a PointerPointer for several. */
    public static int ncclCommInitAll(ncclComm comm, int ndev, IntPointer devlist) {
        return FacadeInit.initAllOne(comm, ndev, FacadeInit.devices(ndev, devlist));
    }
    public static int ncclCommInitAll(ncclComm comm, int ndev, IntBuffer devlist) {
        return FacadeInit.initAllOne(comm, ndev, FacadeInit.devices(ndev, devlist));
    }
    public static int ncclCommInitAll(ncclComm comm, int ndev, int[] devlist) {
        return FacadeInit.initAllOne(comm, ndev, FacadeInit.devices(ndev, devlist));
    }
    public static int ncclCommInitAll(PointerPointer comms, int ndev, IntPointer devlist) {
        return FacadeInit.initAllMany(comms, ndev, FacadeInit.devices(ndev, devlist));
    }
    public static int ncclCommInitAll(PointerPointer comms, int ndev, IntBuffer devlist) {
        return FacadeInit.initAllMany(comms, ndev, FacadeInit.devices(ndev, devlist));
    }
    public static int ncclCommInitAll(PointerPointer comms, int ndev, int[] devlist) {
        return FacadeInit.initAllMany(comms, ndev, FacadeInit.devices(ndev, devlist));
    }

    /** Waits for the communicator's work, then frees it. */
    public static int ncclCommDestroy(ncclComm comm) {
        return FacadeInit.destroy(comm, false);
    }

    /** Stops the communicator's work (streams blocked in it are released) and frees it. */
    public static int ncclCommAbort(ncclComm comm) {
        return FacadeInit.destroy(comm, true);
    }

    public static int ncclCommGetAsyncError(ncclComm comm, IntPointer asyncError) {
        return FacadeCalls.answer(comm, 0, asyncError);
    }
    public static int ncclCommGetAsyncError(ncclComm comm, IntBuffer asyncError) {
        return FacadeCalls.answer(comm, 0, asyncError);
    }
    public static int ncclCommGetAsyncError(ncclComm comm, int[] asyncError) {
        return FacadeCalls.answer(comm, 0, asyncError);
    }

    public static int ncclCommCount(ncclComm comm, IntPointer count) {
        return FacadeCalls.answer(comm, 1, count);
    }
    public static int ncclCommCount(ncclComm comm, IntBuffer count) {
        return FacadeCalls.answer(comm, 1, count);
    }
    public static int ncclCommCount(ncclComm comm, int[] count) {
        return FacadeCalls.answer(comm, 1, count);
    }

    public static int ncclCommCuDevice(ncclComm comm, IntPointer device) {
        return FacadeCalls.answer(comm, 2, device);
    }
    public static int ncclCommCuDevice(ncclComm comm, IntBuffer device) {
        return FacadeCalls.answer(comm, 2, device);
    }
    public static int ncclCommCuDevice(ncclComm comm, int[] device) {
        return FacadeCalls.answer(comm, 2, device);
    }

    public static int ncclCommUserRank(ncclComm comm, IntPointer rank) {
        return FacadeCalls.answer(comm, 3, rank);
    }
    public static int ncclCommUserRank(ncclComm comm, IntBuffer rank) {
        return FacadeCalls.answer(comm, 3, rank);
    }
    public static int ncclCommUserRank(ncclComm comm, int[] rank) {
        return FacadeCalls.answer(comm, 3, rank);
    }

    // ---- ncclCommSplit (FacadeSplit; grouped splits run at the outermost ncclGroupEnd, as NCCL's) ----

    public static int ncclCommSplit(ncclComm comm, int color, int key, ncclComm newcomm, ncclConfig_t config) {
        return newcomm == null ? ncclInvalidArgument : FacadeSplit.split(comm, color, key, FacadeSplit.into(newcomm), config);
    }
    public static int ncclCommSplit(ncclComm comm, int color, int key, PointerPointer newcomm, ncclConfig_t config) {
        return newcomm == null || newcomm.address() == 0 ? ncclInvalidArgument
                : FacadeSplit.split(comm, color, key, FacadeSplit.into(newcomm), config);
    }

    // ---- finalize, revoke, shrink (FacadeEnds, FacadeShrink): NCCL's rules on which call is allowed when ----

    /** Waits for the communicator's work, then frees all but the handle: only ncclCommDestroy is left. */
    public static int ncclCommFinalize(ncclComm comm) {
        return FacadeEnds.finalizeComm(comm);
    }

    /** Stops the work in flight (here and at the peers); then split, shrink and destroy are allowed. */
    public static int ncclCommRevoke(ncclComm comm, int revokeFlags) {
        return FacadeEnds.revoke(comm, revokeFlags);
    }

    /** A child of the ranks not in the list; unlike NCCL's, the excluded ranks call it too and get NULL. */
    public static int ncclCommShrink(ncclComm comm, int[] excludeRanksList, int excludeRanksCount, ncclComm newcomm,
                                     ncclConfig_t config, int shrinkFlags) {
        return FacadeShrink.shrink(comm, excludeRanksList, excludeRanksCount, newcomm, config, shrinkFlags);
    }
    public static int ncclCommShrink(ncclComm comm, IntBuffer excludeRanksList, int excludeRanksCount,
                                     ncclComm newcomm, ncclConfig_t config, int shrinkFlags) {
        return FacadeShrink.shrink(comm, excludeRanksList, excludeRanksCount, newcomm, config, shrinkFlags);
    }
    public static int ncclCommShrink(ncclComm comm, IntPointer excludeRanksList, int excludeRanksCount,
                                     ncclComm newcomm, ncclConfig_t config, int shrinkFlags) {
        return FacadeShrink.shrink(comm, excludeRanksList, excludeRanksCount, newcomm, config, shrinkFlags);
    }
    public static int ncclCommShrink(ncclComm comm, int[] excludeRanksList, int excludeRanksCount,
                                     PointerPointer newcomm, ncclConfig_t config, int shrinkFlags) {
        return FacadeShrink.shrink(comm, excludeRanksList, excludeRanksCount, newcomm, config, shrinkFlags);
    }
    public static int ncclCommShrink(ncclComm comm, IntBuffer excludeRanksList, int excludeRanksCount,
                                     PointerPointer newcomm, ncclConfig_t config, int shrinkFlags) {
        return FacadeShrink.shrink(comm, excludeRanksList, excludeRanksCount, newcomm, config, shrinkFlags);
    }
    public static int ncclCommShrink(ncclComm comm, IntPointer excludeRanksList, int excludeRanksCount,
                                     PointerPointer newcomm, ncclConfig_t config, int shrinkFlags) {
        return FacadeShrink.shrink(comm, excludeRanksList, excludeRanksCount, newcomm, config, shrinkFlags);
    }

    /** An id for ncclCommGrow (a lobby any process of this machine may join); one unconsumed at a time. */
    public static int ncclCommGetUniqueId(ncclComm comm, ncclUniqueId uniqueId) {
        return FacadeGrow.uniqueId(comm, uniqueId);
    }

    /** Existing ranks ({@code rank} -1, the root with the id, the others NULL) and new ones (comm NULL) grow. */
    public static int ncclCommGrow(ncclComm comm, int nRanks, ncclUniqueId uniqueId, int rank, ncclComm newcomm,
                                   ncclConfig_t config) {
        return newcomm == null ? ncclInvalidArgument : FacadeGrow.grow(comm, nRanks, uniqueId, rank,
                FacadeSplit.into(newcomm), config, FacadeCreation.CUDA);
    }
    public static int ncclCommGrow(ncclComm comm, int nRanks, ncclUniqueId uniqueId, int rank, PointerPointer newcomm,
                                   ncclConfig_t config) {
        return newcomm == null || newcomm.address() == 0 ? ncclInvalidArgument : FacadeGrow.grow(comm, nRanks,
                uniqueId, rank, FacadeSplit.into(newcomm), config, FacadeCreation.CUDA);
    }

    // ---- collectives ----

    public static int ncclAllReduce(Pointer sendbuff, Pointer recvbuff, long count, int datatype, int op,
                                    ncclComm comm, CUstream_st stream) {
        return FacadeCalls.collective(Collective.ALL_REDUCE, sendbuff, recvbuff, count, datatype, op, 0, comm, stream);
    }

    public static int ncclAllGather(Pointer sendbuff, Pointer recvbuff, long sendcount, int datatype,
                                    ncclComm comm, CUstream_st stream) {
        return FacadeCalls.collective(Collective.ALL_GATHER, sendbuff, recvbuff, sendcount, datatype, ncclSum, 0, comm, stream);
    }

    public static int ncclReduceScatter(Pointer sendbuff, Pointer recvbuff, long recvcount, int datatype, int op,
                                        ncclComm comm, CUstream_st stream) {
        return FacadeCalls.collective(Collective.REDUCE_SCATTER, sendbuff, recvbuff, recvcount, datatype, op, 0, comm, stream);
    }

    public static int ncclBroadcast(Pointer sendbuff, Pointer recvbuff, long count, int datatype, int root,
                                    ncclComm comm, CUstream_st stream) {
        return FacadeCalls.collective(Collective.BROADCAST, sendbuff, recvbuff, count, datatype, ncclSum, root, comm, stream);
    }

    public static int ncclReduce(Pointer sendbuff, Pointer recvbuff, long count, int datatype, int op, int root,
                                 ncclComm comm, CUstream_st stream) {
        return FacadeCalls.collective(Collective.REDUCE, sendbuff, recvbuff, count, datatype, op, root, comm, stream);
    }

    /** Every rank's block {@code j} to rank {@code j}, split across the paths like the other collectives. */
    public static int ncclAlltoAll(Pointer sendbuff, Pointer recvbuff, long count, int datatype, ncclComm comm,
                                   CUstream_st stream) {
        return FacadeCalls.collective(Collective.ALL_TO_ALL, sendbuff, recvbuff, count, datatype, ncclSum, 0, comm, stream);
    }

    public static int ncclGather(Pointer sendbuff, Pointer recvbuff, long count, int datatype, int root,
                                 ncclComm comm, CUstream_st stream) {
        return FacadeCalls.collective(Collective.GATHER, sendbuff, recvbuff, count, datatype, ncclSum, root, comm, stream);
    }

    public static int ncclScatter(Pointer sendbuff, Pointer recvbuff, long count, int datatype, int root,
                                  ncclComm comm, CUstream_st stream) {
        return FacadeCalls.collective(Collective.SCATTER, sendbuff, recvbuff, count, datatype, ncclSum, root, comm, stream);
    }

    /**
     * Split across the paths like the collectives, and carried by the PCIe path alone where several ranks
     * share a GPU and NCCL cannot run; inside a group any pattern of pairs, as NCCL.
     */
    public static int ncclSend(Pointer sendbuff, long count, int datatype, int peer, ncclComm comm,
                               CUstream_st stream) {
        return FacadeCalls.collective(Collective.SEND, sendbuff, null, count, datatype, ncclSum, peer, comm, stream);
    }

    /** The receiving half of {@link #ncclSend}. */
    public static int ncclRecv(Pointer recvbuff, long count, int datatype, int peer, ncclComm comm,
                               CUstream_st stream) {
        return FacadeCalls.collective(Collective.RECV, null, recvbuff, count, datatype, ncclSum, peer, comm, stream);
    }

    // ---- PreMulSum ----

    /**
     * A PreMulSum operation of {@code comm} into {@code op}: each rank's input multiplied by the scalar, then
     * summed. {@code ncclScalarHostImmediate}: {@code scalar} is one element of {@code datatype} in host memory,
     * read now; {@code ncclScalarDevice}: one element in device memory, read when each collective runs. The
     * code is valid with {@code comm} only and with {@code datatype} only.
     */
    public static int ncclRedOpCreatePreMulSum(IntPointer op, Pointer scalar, int datatype, int residence,
                                               ncclComm comm) {
        return FacadeOps.create(op, scalar, datatype, residence, comm);
    }
    public static int ncclRedOpCreatePreMulSum(IntBuffer op, Pointer scalar, int datatype, int residence,
                                               ncclComm comm) {
        return FacadeOps.create(op, scalar, datatype, residence, comm);
    }
    public static int ncclRedOpCreatePreMulSum(int[] op, Pointer scalar, int datatype, int residence, ncclComm comm) {
        return FacadeOps.create(op, scalar, datatype, residence, comm);
    }

    /** Destroys a PreMulSum of {@code comm}; a built-in, unknown or destroyed {@code op} is ncclInvalidArgument. */
    public static int ncclRedOpDestroy(int op, ncclComm comm) {
        return FacadeOps.destroy(op, comm);
    }

    // ---- windows and signals (FacadeWindows; NCCL's own, where it is the communicator's primary path) ----

    /** Collective over the communicator's ranks; {@code win} gets FlexLink's handle of NCCL's window. */
    public static int ncclCommWindowRegister(ncclComm comm, Pointer buff, long size, ncclWindow_vidmem win, int winFlags) {
        return FacadeWindows.register(comm, buff, size, win, winFlags);
    }
    public static int ncclCommWindowRegister(ncclComm comm, Pointer buff, long size, PointerPointer win, int winFlags) {
        return FacadeWindows.register(comm, buff, size, win, winFlags);
    }
    public static int ncclCommWindowDeregister(ncclComm comm, ncclWindow_vidmem win) {
        return FacadeWindows.deregister(comm, win);
    }
    public static int ncclWinGetUserPtr(ncclComm comm, ncclWindow_vidmem win, PointerPointer outUserPtr) {
        return FacadeWindows.userPtr(comm, win, outUserPtr);
    }
    public static int ncclWinGetUserPtr(ncclComm comm, ncclWindow_vidmem win, Pointer outUserPtr) {
        return FacadeWindows.userPtr(comm, win, outUserPtr);
    }

    /** {@code count} elements into {@code peer}'s window at {@code peerWinOffset} bytes, then its signal; ctx and flags 0. */
    public static int ncclPutSignal(Pointer localbuff, long count, int datatype, int peer, ncclWindow_vidmem peerWin,
                                    long peerWinOffset, int sigIdx, int ctx, int flags, ncclComm comm,
                                    CUstream_st stream) {
        return FacadeWindows.putSignal(localbuff, count, datatype, peer, peerWin, peerWinOffset, sigIdx, ctx, flags, comm, stream);
    }
    public static int ncclSignal(int peer, int sigIdx, int ctx, int flags, ncclComm comm, CUstream_st stream) {
        return FacadeWindows.signal(peer, sigIdx, ctx, flags, comm, stream);
    }
    public static int ncclWaitSignal(int nDesc, ncclWaitSignalDesc_t signalDescs, ncclComm comm, CUstream_st stream) {
        return FacadeWindows.waitSignal(nDesc, signalDescs, comm, stream);
    }

    public static int ncclGroupStart() {
        return NcclFacade.groupStart();
    }

    /** Launches the group's calls and makes the communicators ncclCommInitRank deferred in it (waiting for them). */
    public static int ncclGroupEnd() {
        return NcclFacade.groupEndCode();
    }

    /** Ends the group launching nothing: its calls are forgotten, their estimated time (µs) in the struct. */
    public static int ncclGroupSimulateEnd(ncclSimInfo_t simInfo) {
        return FacadeSimulate.simulateEnd(simInfo);
    }

    // ---- creation with a config, in-place broadcast, errors and debug ----

    /**
     * {@code ncclCommInitRank} with NCCL's config: {@code blocking = 0} creates in the background and answers
     * ncclInProgress, as do the handle's calls and ncclCommGetAsyncError until it is made (poll for
     * ncclSuccess); {@code commName} names it in the log; a bad field is ncclInvalidArgument naming it.
     */
    public static int ncclCommInitRankConfig(ncclComm comm, int nranks, ncclUniqueId commId, int rank,
                                             ncclConfig_t config) {
        return FacadeInit.initRankConfig(comm, nranks, commId, rank, config);
    }
    public static int ncclCommInitRankConfig(PointerPointer comm, int nranks, ncclUniqueId commId, int rank,
                                             ncclConfig_t config) {
        return FacadeInit.initRankConfig(comm, nranks, commId, rank, config);
    }

    /** ncclCommInitRankConfig with {@code nId} ids: the ranks meet at the first (one rendezvous server). */
    public static int ncclCommInitRankScalable(ncclComm newcomm, int nranks, int myrank, int nId, ncclUniqueId commIds,
                                               ncclConfig_t config) {
        return FacadeInit.initRankScalable(newcomm, nranks, myrank, nId, commIds, config);
    }
    public static int ncclCommInitRankScalable(PointerPointer newcomm, int nranks, int myrank, int nId,
                                               ncclUniqueId commIds, ncclConfig_t config) {
        return FacadeInit.initRankScalable(newcomm, nranks, myrank, nId, commIds, config);
    }

    /** Broadcast in place (NCCL's legacy form): {@code buff} is the root's input and every rank's output. */
    public static int ncclBcast(Pointer buff, long count, int datatype, int root, ncclComm comm, CUstream_st stream) {
        return ncclBroadcast(buff, buff, count, datatype, root, comm, stream);
    }

    /** {@code comm}'s failed creation, else this thread's last failed call; "" when none. */
    public static BytePointer ncclGetLastError(ncclComm comm) {
        return FacadeInfo.lastError(comm);
    }

    /** Lets the NCCL underneath read NCCL_DEBUG* again (FlexLink logs through SLF4J); nothing without NCCL. */
    public static void ncclResetDebugInit() {
        FacadeInfo.resetDebugInit();
    }
}
