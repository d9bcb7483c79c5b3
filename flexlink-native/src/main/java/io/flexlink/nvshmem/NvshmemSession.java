package io.flexlink.nvshmem;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.bytedeco.cuda.global.cudart;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * NVSHMEM as initialized in this process: one PE of one set of PEs, on one CUDA device. NVSHMEM is
 * process-global and its initialization, allocation and teardown are collective, so a session outlives
 * the communicators that use it: a later communicator over the same ranks reuses it (NVSHMEM is not
 * finalized when a communicator closes, because closing is not collective; {@link #shutdown()} is).
 *
 * <p>Every NVSHMEM call of FlexLink holds this session's monitor: NVSHMEM was initialized
 * thread-serialized, so calls from several threads must not overlap.
 */
public final class NvshmemSession {
    private static final Logger LOG = LoggerFactory.getLogger(NvshmemSession.class);

    /** Identifies this process to its peers (ranks that share a process cannot be separate PEs). */
    static final String PROCESS = UUID.randomUUID().toString();

    private static NvshmemSession current;
    private static String broken;

    private final long token;
    private final int pe;
    private final int pes;
    private final int device;
    private long nextId;
    private final Map<Long, Long> retired = new TreeMap<>();
    private int live;

    private NvshmemSession(long token, int pe, int pes, int device) {
        this.token = token;
        this.pe = pe;
        this.pes = pes;
        this.device = device;
    }

    /** The session of this process, or null. */
    static synchronized NvshmemSession current() {
        return current;
    }

    /** Why NVSHMEM can no longer be used in this process (a failed or hung initialization), or null. */
    static synchronized String broken() {
        return broken;
    }

    static synchronized void markBroken(String why) {
        if (broken == null) {
            broken = why;
        }
    }

    /** Identifies the session; every PE of it holds the same token. */
    long token() {
        return token;
    }

    int pe() {
        return pe;
    }

    int pes() {
        return pes;
    }

    int device() {
        return device;
    }

    /**
     * Initializes NVSHMEM as PE {@code rank} of {@code ranks} from rank 0's unique id, on a daemon thread
     * whose current device is {@code device}, waiting at most {@code timeout}. Collective. Throws
     * {@link FlexLinkException} (SYSTEM_ERROR) with NVSHMEM's reason; a failure or a timeout leaves
     * NVSHMEM unusable in this process ({@link #broken()}).
     */
    static NvshmemSession initialize(byte[] uid, int rank, int ranks, int device, long token, Duration timeout) {
        synchronized (NvshmemSession.class) {
            if (current != null || broken != null) {
                throw new IllegalStateException("NVSHMEM already set up in this process");
            }
        }
        FutureTask<String> task = new FutureTask<>(() -> {
            int rc = cudart.cudaSetDevice(device);
            if (rc != 0) {
                return "cudaSetDevice(" + device + ") failed with " + rc;
            }
            rc = NvshmemNative.flexlink_nvshmem_init(uid, rank, ranks);
            if (rc != 0) {
                return NvshmemLibrary.lastError() + " (status " + rc + ")";
            }
            int mine = NvshmemNative.flexlink_nvshmem_my_pe();
            int all = NvshmemNative.flexlink_nvshmem_n_pes();
            return mine == rank && all == ranks ? null
                    : "NVSHMEM made this rank PE " + mine + " of " + all + ", expected " + rank + " of " + ranks;
        });
        Thread t = new Thread(task, "flexlink-nvshmem-init-r" + rank);
        t.setDaemon(true);
        t.start();
        String failure;
        long ms = timeout.isZero() ? Long.MAX_VALUE : timeout.toMillis();
        try {
            failure = task.get(ms, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            failure = "NVSHMEM initialization did not finish within " + ms + " ms";
        } catch (ExecutionException e) {
            failure = "NVSHMEM initialization failed: " + e.getCause();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            failure = "NVSHMEM initialization interrupted";
        }
        synchronized (NvshmemSession.class) {
            if (failure != null) {
                markBroken("an earlier NVSHMEM initialization failed in this process: " + failure);
                throw new FlexLinkException(Result.SYSTEM_ERROR, failure);
            }
            current = new NvshmemSession(token, rank, ranks, device);
            LOG.debug("INIT nvshmem: PE {} of {} on device {}, NVSHMEM {}", rank, ranks, device,
                    NvshmemLibrary.versionText(NvshmemLibrary.version()));
            return current;
        }
    }

    /** Collective: allocates {@code bytes} of symmetric memory; null where NVSHMEM returned none. */
    synchronized SymmetricBuffer allocate(long bytes) {
        long id = nextId++;
        long a = NvshmemNative.flexlink_nvshmem_malloc(bytes);
        if (a == 0) {
            LOG.debug("INIT nvshmem: nvshmem_malloc({}) returned NULL", bytes);
            return null;
        }
        live++;
        return new SymmetricBuffer(this, id, a, bytes);
    }

    synchronized void retire(SymmetricBuffer b) {
        retired.put(b.id(), b.address());
        live--;
    }

    /** Ids of this PE's retired buffers, ascending. */
    synchronized long[] retiredIds() {
        long[] ids = new long[retired.size()];
        int i = 0;
        for (long id : retired.keySet()) {
            ids[i++] = id;
        }
        return ids;
    }

    /** Collective: frees the retired buffers {@code ids} (retired on every PE), in ascending order. */
    synchronized void free(List<Long> ids) {
        for (long id : ids) {
            Long a = retired.remove(id);
            if (a != null) {
                NvshmemNative.flexlink_nvshmem_free(a);
            }
        }
    }

    /**
     * Collective: frees every retired buffer and finalizes NVSHMEM in this process; call it on every PE
     * after every communicator that used the nvshmem path has been closed on every PE. A later
     * communicator initializes NVSHMEM again. Does nothing where no session exists.
     */
    public static void shutdown() {
        NvshmemSession s;
        synchronized (NvshmemSession.class) {
            s = current;
            if (s == null) {
                return;
            }
            current = null;
        }
        synchronized (s) {
            if (s.live > 0) {
                LOG.warn("INIT nvshmem: shutdown with {} symmetric buffer(s) still in use", s.live);
            }
            s.free(new ArrayList<>(s.retired.keySet()));
            NvshmemNative.flexlink_nvshmem_finalize();
        }
        LOG.debug("INIT nvshmem: finalized PE {} of {}", s.pe, s.pes);
    }

    @Override
    public String toString() {
        return "NvshmemSession[PE " + pe + "/" + pes + ", device " + device + "]";
    }
}
