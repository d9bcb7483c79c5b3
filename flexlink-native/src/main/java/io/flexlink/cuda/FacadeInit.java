package io.flexlink.cuda;

import static io.flexlink.cuda.FlexNccl.NCCL_UNIQUE_ID_BYTES;
import static io.flexlink.cuda.FlexNccl.ncclInvalidArgument;
import static io.flexlink.cuda.FlexNccl.ncclSuccess;
import static io.flexlink.runtime.NativeMemory.UNSAFE;

import io.flexlink.FlexLinkException;
import java.nio.IntBuffer;
import org.bytedeco.cuda.nccl.ncclComm;
import org.bytedeco.cuda.nccl.ncclUniqueId;
import org.bytedeco.javacpp.IntPointer;
import org.bytedeco.javacpp.PointerPointer;

/** Communicator creation behind {@link FlexNccl}: argument decoding and writing the handles back. */
@SuppressWarnings("rawtypes")
final class FacadeInit {
    private FacadeInit() {
    }

    static int initRank(long[] handle, int nranks, ncclUniqueId commId, int rank) {
        if (commId == null || commId.address() == 0) {
            return ncclInvalidArgument;
        }
        try {
            byte[] id = new byte[NCCL_UNIQUE_ID_BYTES];
            UNSAFE.copyMemory(null, FlexNccl.idAddress(commId), id, UNSAFE.arrayBaseOffset(byte[].class), NCCL_UNIQUE_ID_BYTES);
            handle[0] = NcclFacade.initRank(nranks, id, rank);
            return ncclSuccess;
        } catch (FlexLinkException e) {
            return NcclFacade.failed("ncclCommInitRank", e);
        } catch (RuntimeException | LinkageError e) {
            return NcclFacade.internal("ncclCommInitRank", e);
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
