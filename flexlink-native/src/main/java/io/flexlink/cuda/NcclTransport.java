package io.flexlink.cuda;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.runtime.PrimaryComm;
import io.flexlink.runtime.PrimaryTransport;
import io.flexlink.runtime.RankExchange;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.bytedeco.cuda.global.nccl;
import org.bytedeco.cuda.nccl.ncclComm;
import org.bytedeco.cuda.nccl.ncclConfig_t;
import org.bytedeco.cuda.nccl.ncclUniqueId;
import org.bytedeco.javacpp.BytePointer;
import org.bytedeco.javacpp.PointerPointer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * NCCL as the primary transport: one {@link NcclComm} per rank, over NVLink where the GPUs have it. Each is
 * created with {@code ncclCommInitRankConfig} and a config of this transport's {@link NcclTuning} (blocking: the
 * calls never poll for ncclInProgress); {@link #tuned} gives a transport of other tuning over the same backend.
 */
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
    private final NcclTuning tuning;

    NcclTransport(CudaBackend backend) {
        this.backend = backend;
        int[] v = new int[1];
        NcclErrors.check(nccl.ncclGetVersion(v), "ncclGetVersion", null);
        this.description = "NCCL " + version(v[0]);
        this.tuning = NcclTuning.DEFAULT;
    }

    private NcclTransport(NcclTransport base, NcclTuning tuning) {
        this.backend = base.backend;
        this.tuning = tuning;
        String set = tuning.describe();
        this.description = base.description + (set.isEmpty() ? "" : " (" + set + ")");
    }

    /** This transport with NCCL tuned as {@code tuning} says (null: INVALID_ARGUMENT). */
    NcclTransport tuned(NcclTuning tuning) {
        if (tuning == null) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "tuning: null (NcclTuning.DEFAULT leaves NCCL's)");
        }
        return new NcclTransport(this, tuning);
    }

    NcclTuning tuning() {
        return tuning;
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
        // NCCL has made the communicator when a blocking init returns: the config and netName may go then
        try (BytePointer net = netName(); ncclConfig_t config = config(net)) {
            NcclErrors.check(nccl.ncclCommInitRankConfig(comm, size, id, rank, config),
                    "ncclCommInitRankConfig(rank " + rank + "/" + size + ", device " + device + ")", null);
        } finally {
            Devices.exit(previous);
            id.close();
        }
        LOG.debug("INIT {} rank {}/{} on device {}", description, rank, size, device);
        NcclComm c = new NcclComm(backend, comm, rank, size, device);
        captured(c);
        return c;
    }

    /** {@link #tuning}'s netName as a native string, or null. */
    private BytePointer netName() {
        return tuning.netName() == null ? null : new BytePointer(tuning.netName(), StandardCharsets.UTF_8);
    }

    /** The primary's ncclConfig_t ({@link NcclTuning#write}), whose netName is {@code net}'s. */
    private ncclConfig_t config(BytePointer net) {
        ncclConfig_t config = new ncclConfig_t();
        tuning.write(config.address(), net == null ? 0 : net.address());
        return config;
    }

    @Override
    public PrimaryComm[] createAll(int[] devices) {
        if (!tuning.equals(NcclTuning.DEFAULT)) {
            return createAllTuned(devices); // ncclCommInitAll takes no config
        }
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

    /**
     * {@link #createAll} with a config: one ncclCommInitRankConfig per device inside one NCCL group, which is how
     * NCCL documents making several ranks from one thread; NCCL makes them at the group's end, so the config
     * and netName live until then.
     */
    private PrimaryComm[] createAllTuned(int[] devices) {
        int n = devices.length;
        int previous = Devices.refresh();
        ncclUniqueId id = new ncclUniqueId();
        ncclComm[] comms = new ncclComm[n];
        try (BytePointer net = netName(); ncclConfig_t config = config(net)) {
            NcclErrors.check(nccl.ncclGetUniqueId(id), "ncclGetUniqueId", null);
            NcclErrors.check(nccl.ncclGroupStart(), "ncclGroupStart", null);
            int rc = nccl.ncclSuccess;
            int end;
            boolean launched = false;
            String what = null;
            try {
                for (int r = 0; r < n && rc == nccl.ncclSuccess; r++) {
                    comms[r] = new ncclComm();
                    Devices.enter(devices[r]);
                    rc = nccl.ncclCommInitRankConfig(comms[r], n, id, r, config);
                    what = "ncclCommInitRankConfig(rank " + r + "/" + n + ", device " + devices[r] + ")";
                }
                launched = true;
            } finally {
                // ends the group whatever an init answered or threw: a group left open would defer every later
                // NCCL call of this thread for ever
                end = nccl.ncclGroupEnd();
                if (!launched || rc != nccl.ncclSuccess || end != nccl.ncclSuccess) {
                    abortMade(comms);
                }
            }
            NcclErrors.check(rc, what, null);
            NcclErrors.check(end, "ncclGroupEnd (" + n + " x ncclCommInitRankConfig)", null);
        } finally {
            Devices.exit(previous);
            Devices.refresh();
            id.close();
        }
        NcclComm[] out = new NcclComm[n];
        for (int r = 0; r < n; r++) {
            out[r] = new NcclComm(backend, comms[r], r, n, devices[r]);
            captured(out[r]);
        }
        LOG.debug("INIT {} grouped ncclCommInitRankConfig over {} device(s)", description, n);
        return out;
    }

    /** Aborts what a failed group made (an init that never ran leaves its handle NULL). */
    private static void abortMade(ncclComm[] comms) {
        for (ncclComm c : comms) {
            if (c != null && !c.isNull()) {
                nccl.ncclCommAbort(c);
            }
        }
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
