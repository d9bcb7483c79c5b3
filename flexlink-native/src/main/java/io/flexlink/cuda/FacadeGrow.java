package io.flexlink.cuda;

import static io.flexlink.cuda.FlexNccl.NCCL_UNIQUE_ID_BYTES;
import static io.flexlink.runtime.NativeMemory.UNSAFE;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.UniqueId;
import io.flexlink.cuda.NcclFacade.FacadeComm;
import java.util.Optional;
import java.util.function.LongConsumer;
import org.bytedeco.javacpp.Pointer;

/**
 * {@code ncclCommGetUniqueId} and {@code ncclCommGrow} behind {@link FlexNccl}, on
 * {@link io.flexlink.Communicator#growId()} and {@link io.flexlink.Communicator#grow}: the root's id is a lobby
 * any process of the machine may join, one unconsumed at a time (ncclInvalidUsage otherwise, as NCCL's); an
 * existing rank ({@code comm} not NULL, {@code rank} -1) grows through {@link FacadeSplit} (grouped, blocking or
 * in the background like a split: its ranks meet over the parent, which hands the root's id to the others);
 * a new rank ({@code comm} NULL) is ncclCommInitRankConfig of rank {@code rank} over the id. NCCL's checks,
 * in NCCL's order: newcomm NULL, nRanks below 1, nRanks not more than the communicator's, an existing rank's
 * rank other than -1, a new rank without an id.
 */
final class FacadeGrow {
    private FacadeGrow() {
    }

    /** ncclCommGetUniqueId: the grow id into the 128 bytes at {@code out}. */
    static int uniqueId(Pointer comm, Pointer out) {
        try {
            FacadeComm c = NcclFacade.lookup(comm);
            if (c == null) {
                int pending = FacadePending.code(comm);
                if (pending != Result.INVALID_ARGUMENT.code()) {
                    return FacadePending.forUse("ncclCommGetUniqueId", pending);
                }
                throw invalid("comm: " + (comm == null || comm.address() == 0 ? "NULL"
                        : "not a FlexNccl communicator"));
            }
            if (out == null || out.address() == 0) {
                throw invalid("uniqueId: NULL");
            }
            byte[] b = c.comm.growId().toBytes();
            UNSAFE.copyMemory(b, UNSAFE.arrayBaseOffset(byte[].class), null, idAddress(out), NCCL_UNIQUE_ID_BYTES);
            return Result.SUCCESS.code();
        } catch (FlexLinkException e) {
            return NcclFacade.failed("ncclCommGetUniqueId", e);
        } catch (RuntimeException | LinkageError e) {
            return NcclFacade.internal("ncclCommGetUniqueId", e);
        }
    }

    /** One rank's ncclCommGrow; {@code by} makes a new rank (the CUDA backend's, or a test's). */
    static int grow(Pointer comm, int nRanks, Pointer id, int rank, LongConsumer out, Pointer config,
                    FacadeCreation by) {
        try {
            FacadeComm parent = NcclFacade.lookup(comm); // before NULL goes out: newcomm may be comm's own object
            boolean existing = comm != null && comm.address() != 0;
            out.accept(0); // NULL until the new communicator is made, as NCCL's
            if (nRanks < 1) {
                throw invalid("nRanks: " + nRanks + " (at least 1)");
            }
            if (existing && parent == null) {
                throw invalid("comm: not a FlexNccl communicator");
            }
            if (existing && nRanks <= parent.comm.size()) {
                throw invalid("nRanks: " + nRanks + " is not more than the communicator's " + parent.comm.size());
            }
            if (existing && rank != -1) {
                throw invalid("rank: " + rank + "; an existing rank passes -1 (it keeps its rank)");
            }
            UniqueId uid = id == null || id.address() == 0 ? null : UniqueId.fromBytes(bytes(id));
            long at = config == null ? 0 : config.address() + config.position() * FacadeOptions.BYTES;
            if (!existing) {
                if (uid == null) {
                    throw invalid("uniqueId: NULL; a new rank joins with the root's ncclCommGetUniqueId");
                }
                long[] h = new long[1];
                int rc = by.initRank(h, nRanks, uid.toBytes(), rank, FacadeOptions.read(at));
                if (rc == Result.SUCCESS.code() || rc == Result.IN_PROGRESS.code()) {
                    out.accept(h[0]);
                }
                return rc;
            }
            FacadeOptions options = at == 0 ? new FacadeOptions(parent.blocking, parent.name) : FacadeOptions.read(at);
            return FacadeSplit.start(parent, c -> Optional.of(c.grow(nRanks, uid)), out, options, "ncclCommGrow",
                    false);
        } catch (FlexLinkException e) {
            return NcclFacade.failed("ncclCommGrow", e);
        } catch (RuntimeException | LinkageError e) {
            return NcclFacade.internal("ncclCommGrow", e);
        }
    }

    private static long idAddress(Pointer id) {
        return id.address() + id.position() * NCCL_UNIQUE_ID_BYTES;
    }

    private static byte[] bytes(Pointer id) {
        byte[] b = new byte[NCCL_UNIQUE_ID_BYTES];
        UNSAFE.copyMemory(null, idAddress(id), b, UNSAFE.arrayBaseOffset(byte[].class), NCCL_UNIQUE_ID_BYTES);
        return b;
    }

    private static FlexLinkException invalid(String why) {
        return new FlexLinkException(Result.INVALID_ARGUMENT, why);
    }
}
