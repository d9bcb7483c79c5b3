package io.flexlink.cuda;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.runtime.PrimaryComm;
import io.flexlink.runtime.PrimaryTransport;
import io.flexlink.runtime.RankExchange;
import java.util.ArrayList;
import java.util.List;
import org.bytedeco.cuda.global.nccl;
import org.bytedeco.cuda.nccl.ncclComm;
import org.bytedeco.cuda.nccl.ncclUniqueId;
import org.bytedeco.javacpp.PointerPointer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** NCCL as the primary transport: one {@link NcclComm} per rank, over NVLink where the GPUs have it. */
final class NcclTransport implements PrimaryTransport {
    private static final Logger LOG = LoggerFactory.getLogger(NcclTransport.class);

    /**
     * While the NCCL facade creates a FlexLink communicator on this thread, the NCCL communicators made
     * for it (null otherwise): the facade needs them for NCCL's point-to-point calls, which FlexLink's
     * API lacks.
     */
    private static final ThreadLocal<List<NcclComm>> CAPTURE = new ThreadLocal<>();

    private final CudaBackend backend;
    private final String description;

    NcclTransport(CudaBackend backend) {
        this.backend = backend;
        int[] v = new int[1];
        NcclErrors.check(nccl.ncclGetVersion(v), "ncclGetVersion", null);
        this.description = "NCCL " + version(v[0]);
    }

    /** {@code 22803} → {@code 2.28.3} (codes since NCCL 2.9 are major*10000 + minor*100 + patch). */
    static String version(int code) {
        if (code >= 10000) {
            return code / 10000 + "." + code % 10000 / 100 + "." + code % 100;
        }
        return code / 1000 + "." + code % 1000 / 100 + "." + code % 100;
    }

    @Override
    public String describe() {
        return description;
    }

    @Override
    public boolean allowsSharedDevices() {
        return false;
    }

    @Override
    public PrimaryComm create(RankExchange exchange, int rank, int size, int device) {
        byte[] mine = new byte[0];
        if (rank == 0) {
            ncclUniqueId id = new ncclUniqueId();
            NcclErrors.check(nccl.ncclGetUniqueId(id), "ncclGetUniqueId", null);
            mine = new byte[nccl.NCCL_UNIQUE_ID_BYTES];
            id.internal().get(mine);
            id.close();
        }
        byte[] idBytes = exchange.allGather(mine)[0];
        if (idBytes.length != nccl.NCCL_UNIQUE_ID_BYTES) {
            throw new FlexLinkException(Result.INTERNAL_ERROR, "NCCL unique id from rank 0 has " + idBytes.length + " bytes");
        }
        ncclUniqueId id = new ncclUniqueId();
        id.internal().put(idBytes);
        ncclComm comm = new ncclComm();
        int previous = Devices.enter(device);
        try {
            NcclErrors.check(nccl.ncclCommInitRank(comm, size, id, rank),
                    "ncclCommInitRank(rank " + rank + "/" + size + ", device " + device + ")", null);
        } finally {
            Devices.exit(previous);
            id.close();
        }
        LOG.debug("INIT {} rank {}/{} on device {}", description, rank, size, device);
        NcclComm c = new NcclComm(backend, comm, rank, size, device);
        captured(c);
        return c;
    }

    @Override
    public PrimaryComm[] createAll(int[] devices) {
        int n = devices.length;
        PointerPointer<ncclComm> handles = new PointerPointer<>(n);
        int previous = Devices.refresh();
        try {
            NcclErrors.check(nccl.ncclCommInitAll(handles, n, devices.clone()), "ncclCommInitAll(" + n + " devices)", null);
        } finally {
            Devices.exit(previous); // NCCL restores the device; re-read it into the cache
            Devices.refresh();
        }
        NcclComm[] out = new NcclComm[n];
        for (int r = 0; r < n; r++) {
            out[r] = new NcclComm(backend, new ncclComm(handles.get(r)), r, n, devices[r]);
            captured(out[r]);
        }
        handles.close();
        LOG.debug("INIT {} ncclCommInitAll over {} device(s)", description, n);
        return out;
    }

    private static void captured(NcclComm c) {
        List<NcclComm> l = CAPTURE.get();
        if (l != null) {
            l.add(c);
        }
    }

    /** Starts collecting the NCCL communicators this thread creates. */
    static void beginCapture() {
        CAPTURE.set(new ArrayList<>());
    }

    /** Stops collecting; returns what {@link #create}/{@link #createAll} made since {@link #beginCapture()}. */
    static List<NcclComm> endCapture() {
        List<NcclComm> l = CAPTURE.get();
        CAPTURE.remove();
        return l == null ? List.of() : l;
    }

    @Override
    public void groupStart() {
        NcclErrors.check(nccl.ncclGroupStart(), "ncclGroupStart", null);
    }

    @Override
    public void groupEnd() {
        NcclErrors.check(nccl.ncclGroupEnd(), "ncclGroupEnd", null);
    }
}
