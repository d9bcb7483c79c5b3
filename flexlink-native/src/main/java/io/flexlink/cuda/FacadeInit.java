package io.flexlink.cuda;

import static io.flexlink.cuda.FlexNccl.NCCL_UNIQUE_ID_BYTES;
import static io.flexlink.cuda.FlexNccl.ncclInvalidArgument;
import static io.flexlink.cuda.FlexNccl.ncclSuccess;
import static io.flexlink.runtime.NativeMemory.UNSAFE;

import io.flexlink.FlexLink;
import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.UniqueId;
import java.nio.IntBuffer;
import org.bytedeco.cuda.nccl.ncclComm;
import org.bytedeco.cuda.nccl.ncclUniqueId;
import org.bytedeco.javacpp.IntPointer;
import org.bytedeco.javacpp.Pointer;
import org.bytedeco.javacpp.PointerPointer;

/** Communicator creation behind {@link FlexNccl}: argument decoding and writing the handles back. */
@SuppressWarnings("rawtypes")
final class FacadeInit {
    private FacadeInit() {
    }

    /** {@link FacadeCreation#initRank} of the CUDA backend, with the id read from bytedeco's struct. */
    static int initRank(long[] handle, int nranks, ncclUniqueId commId, int rank, FacadeOptions options) {
        if (commId == null || commId.address() == 0) {
            return ncclInvalidArgument;
        }
        byte[] id = new byte[NCCL_UNIQUE_ID_BYTES];
        UNSAFE.copyMemory(null, FacadeInfo.idAddress(commId), id, UNSAFE.arrayBaseOffset(byte[].class), NCCL_UNIQUE_ID_BYTES);
        return FacadeCreation.CUDA.initRank(handle, nranks, id, rank, options);
    }

    /** {@code ncclCommInitRankConfig} into one {@link ncclComm}: its handle is written on success and in progress. */
    static int initRankConfig(ncclComm comm, int nranks, ncclUniqueId commId, int rank, Pointer config) {
        if (comm == null) {
            return ncclInvalidArgument;
        }
        long[] h = new long[1];
        int rc = initRankConfig(h, nranks, commId, rank, config);
        if (rc == ncclSuccess || rc == Result.IN_PROGRESS.code()) {
            NcclFacade.setAddress(comm, h[0]);
        }
        return rc;
    }

    static int initRankConfig(PointerPointer comm, int nranks, ncclUniqueId commId, int rank, Pointer config) {
        if (comm == null || comm.address() == 0) {
            return ncclInvalidArgument;
        }
        long[] h = new long[1];
        int rc = initRankConfig(h, nranks, commId, rank, config);
        if (rc == ncclSuccess || rc == Result.IN_PROGRESS.code()) {
            UNSAFE.putLong(comm.address() + 8 * comm.position(), h[0]);
        }
        return rc;
    }

    private static int initRankConfig(long[] h, int nranks, ncclUniqueId commId, int rank, Pointer config) {
        FacadeOptions options;
        try {
            options = FacadeOptions.read(config == null ? 0 : config.address() + config.position() * FacadeOptions.BYTES);
        } catch (FlexLinkException e) {
            return NcclFacade.failed("ncclCommInitRankConfig", e);
        }
        return initRank(h, nranks, commId, rank, options);
    }

    /**
     * {@code ncclCommInitRankScalable} into {@code out} (an {@link ncclComm} or the {@code ncclComm_t*} slot of a
     * {@link PointerPointer}): NCCL spreads its bootstrap over up to one id per rank; FlexLink's rendezvous is one
     * server (rank 0's, or the lobby that leads to it) and needs one address, so every rank meets at the first id,
     * which is the same on every rank (NCCL requires the same ids in the same order everywhere). The others are
     * checked to be FlexLink ids and are not used: a lobby of theirs closes by itself after flexlink.initTimeout.
     */
    static int initRankScalable(Pointer out, int nranks, int myrank, int nId, ncclUniqueId commIds, Pointer config) {
        if (out == null || out.address() == 0 && out instanceof PointerPointer) {
            return ncclInvalidArgument;
        }
        long[] h = new long[1];
        int rc;
        try {
            FacadeOptions options = FacadeOptions.read(config == null ? 0
                    : config.address() + config.position() * FacadeOptions.BYTES);
            rc = scalable(h, nranks, myrank, nId, commIds == null ? 0 : FacadeInfo.idAddress(commIds), options,
                    FacadeCreation.CUDA);
        } catch (FlexLinkException e) {
            return NcclFacade.failed("ncclCommInitRankScalable", e);
        }
        if (rc == ncclSuccess || rc == Result.IN_PROGRESS.code()) {
            if (out instanceof PointerPointer pp) {
                UNSAFE.putLong(pp.address() + 8 * pp.position(), h[0]);
            } else {
                NcclFacade.setAddress(out, h[0]);
            }
        }
        return rc;
    }

    /** The {@code nId} ids (128 bytes each) at {@code ids} checked, then {@code by} makes the rank at the first. */
    static int scalable(long[] h, int nranks, int myrank, int nId, long ids, FacadeOptions options, FacadeCreation by) {
        try {
            if (nId < 1 || nId > nranks) { // NCCL's first check, before it reads an id
                throw new FlexLinkException(Result.INVALID_ARGUMENT, "nId: " + nId + " is not in [1, nranks = "
                        + nranks + "]");
            }
            if (ids == 0) {
                throw new FlexLinkException(Result.INVALID_ARGUMENT, "commIds: NULL");
            }
            UniqueId[] all = new UniqueId[nId];
            for (int i = 0; i < nId; i++) {
                byte[] b = new byte[NCCL_UNIQUE_ID_BYTES];
                UNSAFE.copyMemory(null, ids + (long) i * NCCL_UNIQUE_ID_BYTES, b, UNSAFE.arrayBaseOffset(byte[].class),
                        NCCL_UNIQUE_ID_BYTES);
                try {
                    all[i] = UniqueId.fromBytes(b);
                } catch (FlexLinkException e) {
                    throw new FlexLinkException(Result.INVALID_ARGUMENT, "commIds[" + i + "]: " + e.detail(), e);
                }
            }
            return by.initRank(h, nranks, FlexLink.scalableRendezvous(all, nranks).toBytes(), myrank, options);
        } catch (FlexLinkException e) {
            return NcclFacade.failed("ncclCommInitRankScalable", e);
        }
    }

    /**
     * {@code ncclCommDestroy} (waits for the communicator's work, then frees it) or {@code ncclCommAbort}
     * (stops it); NULL is a no-op, as NCCL's; a handle still being made is freed once it is.
     */
    static int destroy(ncclComm comm, boolean abort) {
        if (comm == null || comm.address() == 0) {
            return ncclSuccess;
        }
        NcclFacade.FacadeComm c = NcclFacade.remove(comm);
        if (c == null) {
            return FacadePending.release(comm);
        }
        String call = abort ? "ncclCommAbort" : "ncclCommDestroy";
        try {
            if (abort) {
                c.comm.abort(); // releases a background finalize's drain, so that the wait below is short
            }
            FacadeEnds.awaitEnder(c);
            c.comm.close();
            return ncclSuccess;
        } catch (FlexLinkException e) {
            return NcclFacade.failed(call + " (" + c.label + ")", e);
        } catch (RuntimeException | LinkageError e) {
            return NcclFacade.internal(call + " (" + c.label + ")", e);
        }
    }

    static int[] devices(int ndev, Object devlist) {
        if (ndev < 1) {
            return null;
        }
        int[] d = new int[ndev];
        for (int i = 0; i < ndev; i++) {
            if (devlist == null) {
                d[i] = i; // NCCL: a null devlist means devices 0 .. ndev-1
            } else if (devlist instanceof int[]) {
                int[] a = (int[]) devlist;
                if (a.length < ndev) {
                    return null;
                }
                d[i] = a[i];
            } else if (devlist instanceof IntBuffer) {
                IntBuffer b = (IntBuffer) devlist;
                if (b.remaining() < ndev) {
                    return null;
                }
                d[i] = b.get(b.position() + i);
            } else {
                IntPointer p = (IntPointer) devlist;
                if (p.address() == 0) {
                    d[i] = i;
                } else {
                    d[i] = p.get(i);
                }
            }
        }
        return d;
    }

    static int initAllOne(ncclComm comm, int ndev, int[] devices) {
        if (comm == null || devices == null) {
            return ncclInvalidArgument;
        }
        if (ndev != 1) {
            // bytedeco's @ByPtrPtr ncclComm holds one handle: NCCL would write the others past it
            NcclFacade.LOG.warn("COLL ncclCommInitAll: {} devices need a PointerPointer of {} handles, not one ncclComm",
                    ndev, ndev);
            return ncclInvalidArgument;
        }
        long[] h = new long[1];
        int rc = initAll(h, devices);
        if (rc == ncclSuccess) {
            NcclFacade.setAddress(comm, h[0]);
        }
        return rc;
    }

    static int initAllMany(PointerPointer comms, int ndev, int[] devices) {
        if (comms == null || comms.address() == 0 || devices == null) {
            return ncclInvalidArgument;
        }
        long[] h = new long[ndev];
        int rc = initAll(h, devices);
        if (rc == ncclSuccess) {
            for (int i = 0; i < ndev; i++) {
                UNSAFE.putLong(comms.address() + 8 * (comms.position() + i), h[i]);
            }
        }
        return rc;
    }

    static int initAll(long[] handles, int[] devices) {
        try {
            long[] h = NcclFacade.initAll(devices);
            System.arraycopy(h, 0, handles, 0, h.length);
            return ncclSuccess;
        } catch (FlexLinkException e) {
            return NcclFacade.failed("ncclCommInitAll", e);
        } catch (RuntimeException | LinkageError e) {
            return NcclFacade.internal("ncclCommInitAll", e);
        }
    }
}
