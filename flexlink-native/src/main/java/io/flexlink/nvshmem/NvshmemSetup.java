package io.flexlink.nvshmem;

import io.flexlink.FlexLinkException;
import io.flexlink.path.PathContext;
import io.flexlink.path.StagedPath;
import io.flexlink.runtime.RankExchange;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sets the NVSHMEM path up for one rank, collectively: every rank runs the same exchanges in the same
 * order and reaches the same decision from the same gathered data, so either every rank gets a path or
 * none does (rank 0 then logs one INFO line saying why).
 *
 * <ol>
 *   <li>Each rank tells its process and its process's NVSHMEM session: ranks sharing a process cannot
 *       be separate PEs; a session over exactly these ranks is reused; otherwise NVSHMEM is initialized
 *       (rank 0's {@code nvshmemx_get_uniqueid}, sent to all through FlexLink's exchange, then
 *       {@code NVSHMEMX_INIT_WITH_UNIQUEID} on every rank).</li>
 *   <li>Buffers retired on every rank are freed, the staging buffer is allocated (both collective), its
 *       signals zeroed, and a barrier makes sure no rank puts before every rank has zeroed.</li>
 * </ol>
 */
final class NvshmemSetup {
    private static final Logger LOG = LoggerFactory.getLogger(NvshmemSetup.class);
    private static final Object SETUP = new Object();
    static final String INIT = "init";
    static final String REUSE = "reuse";

    private NvshmemSetup() {
    }

    /** The path, or null when the ranks agreed it cannot run (logged at INFO by rank 0). */
    static StagedPath create(PathContext context) {
        String[] off = new String[1];
        StagedPath p = null;
        // ranks that share a process learn it before any takes the process's setup lock: one holding it while
        // it waits in a round for a rank of its own process would wait for a thread blocked on that lock
        off[0] = sharedProcess(strings(context.exchange().allGather(bytes(NvshmemSession.PROCESS))));
        if (off[0] == null) {
            synchronized (SETUP) {
                p = setUp(context, off);
            }
        }
        if (p == null && context.rank() == 0) {
            LOG.info("INIT nvshmem path off: {}", off[0]);
        }
        return p;
    }

    /** Why ranks of these processes (one id per rank) cannot be PEs, or null when each has a process of its own. */
    static String sharedProcess(String[] processes) {
        Map<String, Integer> first = new HashMap<>();
        for (int r = 0; r < processes.length; r++) {
            Integer other = first.putIfAbsent(processes[r], r);
            if (other != null) {
                return "ranks " + other + " and " + r + " share one process; NVSHMEM needs one PE per process"
                        + " (one rank per process)";
            }
        }
        return null;
    }

    private static StagedPath setUp(PathContext context, String[] off) {
        RankExchange ex = context.exchange();
        int rank = context.rank();
        int n = context.size();
        NvshmemSession session = NvshmemSession.current();
        String decision = decide(strings(ex.allGather(bytes(state(session, context.device())))), n);
        if (!decision.equals(INIT) && !decision.equals(REUSE)) {
            off[0] = decision;
            return null;
        }
        if (decision.equals(INIT)) {
            session = initialize(context, off);
            if (session == null) {
                return null;
            }
        }
        int slots = context.config().slots();
        long chunk = context.config().chunkBytes();
        long total = NvshmemChannel.totalBytes(n, slots, chunk);
        long[] retired;
        synchronized (session) {
            retired = session.retiredIds();
        }
        List<Long> free = commonIds(ex.allGather(longs(retired)));
        SymmetricBuffer buffer;
        synchronized (session) {
            session.free(free);
            buffer = session.allocate(total);
        }
        String failed = firstFailure(ex.allGather(bytes(buffer == null ? "nvshmem_malloc(" + total
                + " B) returned NULL (raise NVSHMEM_SYMMETRIC_SIZE, or lower flexlink.chunkBytes/slots)" : "")));
        if (failed != null) {
            if (buffer != null) {
                buffer.close();
            }
            off[0] = failed;
            return null;
        }
        NvshmemChannel channel;
        StagedPath path;
        try {
            NvshmemOps ops = new NativeNvshmemOps();
            boolean local = StagedPath.localStream(context);
            channel = new NvshmemChannel(context.backend(), ops, session, buffer, context.device(), rank, n, slots,
                    chunk, buffer.address(), local);
            path = new StagedPath("nvshmem", context.backend(), channel, rank, n, context.device(), local,
                    context.budget());
        } catch (RuntimeException | Error e) {
            buffer.close(); // retired: freed at a later setup once every rank has retired it
            throw e;
        }
        try {
            channel.ready();
        } catch (RuntimeException | Error e) {
            try {
                path.close(); // its streams, memory and the buffer
            } catch (RuntimeException | Error c) {
                e.addSuppressed(c);
            }
            throw e;
        }
        return path;
    }

    /** This rank's process and session, as {@code process|token|pe|pes|device|wanted device|broken}. */
    static String state(NvshmemSession s, int device) {
        String broken = NvshmemSession.broken();
        return NvshmemSession.PROCESS + "|" + (s == null ? "-|-1|-1|-1" : s.token() + "|" + s.pe() + "|" + s.pes()
                + "|" + s.device()) + "|" + device + "|" + (broken == null ? "" : broken);
    }

    /** {@link #INIT}, {@link #REUSE}, or why the path cannot run; the same on every rank. */
    static String decide(String[] states, int n) {
        String[][] f = new String[n][];
        String[] processes = new String[n];
        for (int r = 0; r < n; r++) {
            f[r] = states[r].split("\\|", 7);
            if (!f[r][6].isEmpty()) {
                return "rank " + r + ": " + f[r][6];
            }
            processes[r] = f[r][0];
        }
        String shared = sharedProcess(processes);
        if (shared != null) {
            return shared;
        }
        boolean none = true;
        boolean same = true;
        for (int r = 0; r < n; r++) {
            none &= f[r][1].equals("-");
            same &= f[r][1].equals(f[0][1]) && f[r][2].equals(Integer.toString(r))
                    && f[r][3].equals(Integer.toString(n));
        }
        if (none) {
            return INIT;
        }
        if (!same) {
            for (int r = 0; r < n; r++) {
                if (!f[r][1].equals("-")) {
                    return "rank " + r + "'s process already runs NVSHMEM as PE " + f[r][2] + " of " + f[r][3]
                            + " for other ranks; a process holds one NVSHMEM job";
                }
            }
        }
        for (int r = 0; r < n; r++) {
            if (!f[r][4].equals(f[r][5])) {
                return "rank " + r + "'s process runs NVSHMEM on device " + f[r][4] + ", the communicator uses"
                        + " device " + f[r][5];
            }
        }
        return REUSE;
    }

    /** Rank 0's unique id and token to all, then NVSHMEM's initialization on every rank. */
    private static NvshmemSession initialize(PathContext context, String[] off) {
        RankExchange ex = context.exchange();
        int rank = context.rank();
        byte[] mine = new byte[0];
        if (rank == 0) {
            byte[] uid = new byte[NvshmemNative.flexlink_nvshmem_uniqueid_bytes()];
            int rc = NvshmemNative.flexlink_nvshmem_get_uniqueid(uid);
            long token = new SecureRandom().nextLong() | 1;
            mine = rc == 0 ? ByteBuffer.allocate(9 + uid.length).put((byte) 1).putLong(token).put(uid).array()
                    : bytes("\0nvshmemx_get_uniqueid failed on rank 0: " + NvshmemLibrary.lastError());
        }
        byte[] root = ex.allGather(mine)[0];
        if (root.length == 0 || root[0] != 1) {
            off[0] = root.length == 0 ? "rank 0 sent no unique id" : new String(root, 1, root.length - 1,
                    StandardCharsets.UTF_8);
            return null;
        }
        ByteBuffer b = ByteBuffer.wrap(root);
        b.get();
        long token = b.getLong();
        byte[] uid = new byte[b.remaining()];
        b.get(uid);
        NvshmemSession session = null;
        String failure = "";
        try {
            session = NvshmemSession.initialize(uid, rank, context.size(), context.device(), token,
                    context.config().initTimeout());
        } catch (FlexLinkException | IllegalStateException e) {
            failure = e.getMessage();
        }
        String failed = firstFailure(ex.allGather(bytes(failure)));
        if (failed != null) {
            off[0] = failed;
            return null;
        }
        return session;
    }

    /** The first rank's non-empty message as {@code rank r: ...}, or null when every rank sent none. */
    private static String firstFailure(byte[][] all) {
        for (int r = 0; r < all.length; r++) {
            if (all[r].length > 0) {
                return "rank " + r + ": " + new String(all[r], StandardCharsets.UTF_8);
            }
        }
        return null;
    }

    /** Ids present in every rank's list, ascending. */
    static List<Long> commonIds(byte[][] all) {
        List<Long> common = new ArrayList<>();
        ByteBuffer first = ByteBuffer.wrap(all[0]);
        while (first.remaining() >= Long.BYTES) {
            long id = first.getLong();
            boolean everywhere = true;
            for (int r = 1; r < all.length && everywhere; r++) {
                boolean found = false;
                ByteBuffer other = ByteBuffer.wrap(all[r]);
                while (other.remaining() >= Long.BYTES && !found) {
                    found = other.getLong() == id;
                }
                everywhere = found;
            }
            if (everywhere) {
                common.add(id);
            }
        }
        return common;
    }

    private static byte[] longs(long[] v) {
        ByteBuffer b = ByteBuffer.allocate(v.length * Long.BYTES);
        for (long x : v) {
            b.putLong(x);
        }
        return b.array();
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static String[] strings(byte[][] all) {
        String[] s = new String[all.length];
        for (int r = 0; r < all.length; r++) {
            s[r] = new String(all[r], StandardCharsets.UTF_8);
        }
        return s;
    }
}
