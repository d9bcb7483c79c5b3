package io.flexlink.comm;

import io.flexlink.Collective;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.UniqueId;
import io.flexlink.Version;
import io.flexlink.balance.Balancer;
import io.flexlink.balance.FixedShares;
import io.flexlink.balance.SharedBoard;
import io.flexlink.balance.Shares;
import io.flexlink.balance.TuningCacheWriter;
import io.flexlink.balance.TuningTable;
import io.flexlink.bootstrap.InProcessRendezvous;
import io.flexlink.bootstrap.TcpRendezvous;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.path.Path;
import io.flexlink.path.PathContext;
import io.flexlink.path.PathProvider;
import io.flexlink.path.PathRegistry;
import io.flexlink.path.PrimaryPath;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.MemoryPlacement;
import io.flexlink.runtime.PinnedMemory;
import io.flexlink.runtime.PrimaryComm;
import io.flexlink.runtime.PrimaryTransport;
import io.flexlink.runtime.RankDevices;
import io.flexlink.runtime.RankExchange;
import io.flexlink.sync.EnqueueBudget;
import io.flexlink.sync.StagingLayout;
import io.flexlink.validate.Validator;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Creates communicators: all ranks of a process at once, or one rank per thread from a unique id. The
 * creation of each rank is a transaction ({@link CreationLog}): when any rank fails, every rank frees
 * what it had made (a rank already built is aborted, which tells its peers), and the first failure is
 * thrown with its result code.
 */
public final class CommunicatorFactory {
    private static final Logger LOG = LoggerFactory.getLogger(CommunicatorFactory.class);

    private CommunicatorFactory() {
    }

    /** Like {@code ncclCommInitAll}: rank {@code i} on {@code devices[i]}, created by this thread. */
    public static Communicator[] initAll(Backend backend, FlexLinkConfig config, int[] devices) {
        if (devices == null || devices.length == 0) {
            throw Validator.invalid("devices: at least one device is needed");
        }
        int n = devices.length;
        for (int d : devices) {
            if (d < 0 || d >= backend.deviceCount()) {
                throw Validator.invalid("devices: " + d + " is not a device of the " + backend.name()
                        + " backend (it has " + backend.deviceCount() + ")");
            }
        }
        PrimaryTransport transport = backend.primaryTransport();
        RankDevices rankDevices = RankDevices.of(backend, devices);
        boolean primaryOn = primaryOn(config, transport, rankDevices);
        PrimaryComm[] primaries = primaryOn ? transport.createAll(devices) : null;
        // each rank's creation is a transaction of its own: what it made is freed if any rank fails
        CreationLog[] logs = new CreationLog[n];
        for (int r = 0; r < n; r++) {
            logs[r] = new CreationLog("rank " + r + "/" + n);
            if (primaries != null) {
                logs[r].add(primaries[r], CreationLog.abortThenClose(primaries[r]));
            }
        }
        // the primary communicators come from one call (ncclCommInitAll); the other paths may need every
        // rank at once (NVSHMEM's init is collective), so each rank is set up on a thread of its own
        String token = UniqueId.random().token();
        RankExchange[] exchanges = new RankExchange[n];
        for (int r = 0; r < n; r++) {
            exchanges[r] = InProcessRendezvous.join(token, n, r, config.initTimeout());
        }
        Communicator[] comms = new Communicator[n];
        // ncclCommInitAll's communicators are driven by one thread (one group over every rank): size for that
        EnqueueBudget budget = new EnqueueBudget(n);
        List<Throwable> failures = RankThreads.run(n,
                rank -> comms[rank] = build(logs[rank], backend, config, exchanges[rank], rank, rankDevices,
                        primaryOn ? primaries[rank] : null, transport, budget),
                (failure, rank) -> exchanges[rank].fail(failure), // the other ranks stop waiting at once
                rank -> InProcessRendezvous.leave(token));
        if (failures.isEmpty()) {
            for (CreationLog log : logs) {
                log.commit();
            }
            return comms;
        }
        Throwable first = failures.get(0);
        FlexLinkException thrown = first instanceof FlexLinkException ? (FlexLinkException) first
                : new FlexLinkException(Result.INTERNAL_ERROR, "communicator creation failed: " + first, first);
        for (Throwable t : failures.subList(1, failures.size())) {
            thrown.addSuppressed(t); // the other ranks' failures (typically: a rank they waited for is gone)
        }
        for (CreationLog log : logs) {
            log.rollback(thrown); // a rank that was fully built is aborted: its peers are told
        }
        throw thrown;
    }

    /**
     * Tells the communicator {@code node} that a call of its of {@code collective} ({@code count} elements of
     * {@code type}) was part of a larger call whose other stages, outside it, took {@code seconds} on this rank
     * (a multi-node call's inter-node stage): its balancer weighs its decisions by the whole call. A no-op for
     * a communicator of another kind.
     */
    public static void outsideTime(Communicator node, Collective collective, long count, DataType type,
                                   float seconds) {
        if (node instanceof FlexCommunicator f) {
            f.outsideTime(collective, count, type, seconds);
        }
    }

    /** Like {@code ncclCommInitRank}: every rank calls this with the same id, from its own thread. */
    public static Communicator initRank(Backend backend, FlexLinkConfig config, int nranks, UniqueId id, int rank,
                                        int device) {
        if (id == null) {
            throw Validator.invalid("commId: null");
        }
        if (nranks < 1) {
            throw Validator.invalid("nranks: " + nranks + " (must be at least 1)");
        }
        if (rank < 0 || rank >= nranks) {
            throw Validator.invalid("rank: " + rank + " is not in [0, " + nranks + ")");
        }
        if (device < 0 || device >= backend.deviceCount()) {
            throw Validator.invalid("device: " + device + " is not a device of the " + backend.name() + " backend");
        }
        if (id.address() != null) {
            // an id from getUniqueId(host, port): ranks may be processes, so they meet over TCP
            return initRank(backend, config, TcpRendezvous.join(id, nranks, rank, config.initTimeout()), nranks,
                    rank, device);
        }
        RankExchange exchange = InProcessRendezvous.join(id.token(), nranks, rank, config.initTimeout());
        try {
            return initRank(backend, config, exchange, nranks, rank, device);
        } finally {
            InProcessRendezvous.leave(id.token());
        }
    }

    /**
     * Creates one rank over any exchange (in-process or over the network). The communicator owns
     * {@code exchange}: it is closed when creation fails or the communicator is closed (an abort keeps it), and
     * a peer process that the exchange reports lost aborts the communicator, which releases this rank's
     * streams blocked on that peer.
     */
    public static Communicator initRank(Backend backend, FlexLinkConfig config, RankExchange exchange, int nranks,
                                        int rank, int device) {
        CreationLog log = new CreationLog("rank " + rank + "/" + nranks);
        try {
            Communicator comm = create(log, backend, config, exchange, nranks, rank, device);
            exchange.onPeerLost((lost, why) -> {
                LOG.error("rank {}/{}: rank {} is gone ({}); aborting the communicator", rank, nranks, lost, why);
                comm.abort();
            });
            log.commit();
            return comm;
        } catch (RuntimeException | Error e) {
            try {
                exchange.fail(e); // the peers learn why at once, not after this rank's rollback or their timeout
            } catch (RuntimeException suppressed) {
                e.addSuppressed(suppressed);
            }
            log.rollback(e); // what this rank made, last made first
            throw e;
        }
    }

    private static Communicator create(CreationLog log, Backend backend, FlexLinkConfig config,
                                       RankExchange exchange, int nranks, int rank, int device) {
        // every rank must split identically, and the primary's ranks agree on how it is made (NCCL works its
        // channels out from each rank's own config): refuse ranks configured differently
        // the version too: builds may cut calls, tune or lay out the board differently
        exchange.requireAlike(digest(config) + " staging=" + StagingLayout.FORMAT + " version=" + Version.VERSION
                + " primary=" + backend.primaryTransport().describe(), "every rank must split identically");
        RankDevices devices = RankDevices.exchange(exchange, backend, device);
        PrimaryTransport transport = backend.primaryTransport();
        boolean primaryOn = primaryOn(config, transport, devices);
        PrimaryComm primaryComm = primaryOn ? transport.create(exchange, rank, nranks, device) : null;
        if (primaryComm != null) {
            log.add(primaryComm, CreationLog.abortThenClose(primaryComm));
        }
        // a rank made by initRank is driven by its own thread or process
        return build(log, backend, config, exchange, rank, devices, primaryComm, transport,
                EnqueueBudget.ONE_RANK_PER_THREAD);
    }

    /** Memory of {@code purpose} that rank 0 creates and every rank maps; registered in {@code log}. */
    private static PinnedMemory shared(CreationLog log, Backend backend, RankExchange exchange, int rank,
                                       String purpose, long bytes, MemoryPlacement placement,
                                       Consumer<PinnedMemory> initialize) {
        PinnedMemory mem = rank != 0 ? null : log.add(placement == null
                ? backend.createShared(bytes, purpose, exchange.crossProcess())
                : backend.createShared(bytes, purpose, exchange.crossProcess(), placement));
        if (mem != null && initialize != null) {
            initialize.accept(mem); // before any other rank can see it
        }
        byte[] name = fromRankZero(exchange, rank, mem == null ? new byte[0]
                : mem.name().getBytes(StandardCharsets.UTF_8));
        if (mem == null) {
            mem = log.add(backend.openShared(new String(name, StandardCharsets.UTF_8), bytes));
        }
        exchange.allGather(new byte[0]); // every rank has mapped it
        backend.sharedMapped(mem); // a file behind it loses its name now: nothing outlives the processes
        return mem;
    }

    private static byte[] fromRankZero(RankExchange exchange, int rank, byte[] bytes) {
        return exchange.allGather(rank == 0 ? bytes : new byte[0])[0];
    }

    /**
     * Builds one rank; every rank runs the same sequence of exchanges. What it makes is registered in
     * {@code log} (which holds {@code primaryComm} already), and the communicator built last owns it all.
     */
    private static Communicator build(CreationLog log, Backend realBackend, FlexLinkConfig config,
                                      RankExchange exchange, int rank, RankDevices devices, PrimaryComm primaryComm,
                                      PrimaryTransport transport, EnqueueBudget budget) {
        Backend backend = log.tracking(realBackend);
        int n = devices.size();
        int device = devices.ordinal(rank);
        List<String> aux = new ArrayList<>();
        List<Path> paths = new ArrayList<>();
        PathContext context = new PathContext(backend, config, exchange,
                (purpose, bytes, placement, init) -> shared(log, backend, exchange, rank, purpose, bytes, placement,
                        init), rank, devices, budget);
        for (String name : config.paths()) {
            if (name.equals("primary")) {
                continue;
            }
            Path p = provided(log, name, context);
            if (p != null) {
                aux.add(name);
                paths.add(p);
            }
        }
        if (aux.isEmpty() && primaryComm == null) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "flexlink.paths: no usable path in " + config.paths());
        }
        Path primary = primaryComm == null ? null : new PrimaryPath(primaryComm);
        Shares shares;
        SharedBoard board = null;
        TuningCacheWriter cacheWriter = null;
        if (config.shares().isEmpty() && primary != null && !aux.isEmpty()) {
            int mark = log.mark();
            board = new SharedBoard(shared(log, backend, exchange, rank, "board", SharedBoard.bytes(n), null, null),
                    rank, n, Balancer.boardColumns(aux.size()), config.initTimeout());
            log.owned(mark, board, board);
            // rank 0's key for every rank: processes may see different GPUs (CUDA_VISIBLE_DEVICES), and a rank
            // that found rank 0's table stale would start from other shares than rank 0 and split differently
            String fingerprint = new String(fromRankZero(exchange, rank, rank == 0
                    ? fingerprint(backend, config, n, aux, budget).getBytes(StandardCharsets.UTF_8) : new byte[0]),
                    StandardCharsets.UTF_8);
            byte[] text = fromRankZero(exchange, rank, rank == 0
                    ? TuningTable.load(config.tuningCache(), fingerprint, Version.VERSION, aux.size())
                            .serialize(fingerprint, Version.VERSION).getBytes(StandardCharsets.UTF_8)
                    : new byte[0]);
            TuningTable table = TuningTable.parse(new String(text, StandardCharsets.UTF_8), fingerprint,
                    Version.VERSION, aux.size(), "rank 0");
            // rank 0 persists the table, off the calling thread; closed (flushed) with the communicator
            cacheWriter = rank == 0 && config.tuningCache() != null
                    ? log.add(new TuningCacheWriter(config.tuningCache(), fingerprint, Version.VERSION)) : null;
            shares = new Balancer(aux, config.balanceWindow(), config.tuningBudget(), config.minSplitBytes(), board,
                    table == null ? new TuningTable() : table, cacheWriter != null ? cacheWriter : t -> { });
        } else {
            shares = new FixedShares(aux, config.shares());
        }
        if (rank == 0) {
            LOG.info("INIT {} ranks on {} backend: primary {}, auxiliary {}, shares {}, chunk {} x {} slots",
                    n, backend.name(), primary != null ? transport.describe() : "off", aux,
                    config.shares().isEmpty() ? (board != null ? "balanced" : "all auxiliary") : config.shares(),
                    config.raw(FlexLinkConfig.CHUNK_BYTES), config.raw(FlexLinkConfig.SLOTS));
        }
        SharedBoard boardToClose = board;
        TuningCacheWriter writerToClose = cacheWriter;
        // the rendezvous connections are not here: they live until close() (the splitter holds them), so that a
        // revoked or aborted communicator can still be split
        AutoCloseable resources = () -> {
            if (writerToClose != null) {
                writerToClose.close();
            }
            if (boardToClose != null) {
                boardToClose.close();
            }
        };
        // an abort reaches a peer waiting at a decision point through the board's own abort word
        Runnable tellPeers = board == null ? null : () -> boardToClose.abort(rank);
        // a child is made over its subgroup's exchange like any rank, on the real backend (it tracks its own)
        CommSplitter splitter = new CommSplitter(exchange, rank, config, (childExchange, size, childRank) ->
                initRank(realBackend, config, childExchange, size, childRank, device), false);
        FlexCommunicator comm = new FlexCommunicator(backend, transport, rank, n, device, primary, paths, shares,
                config.minSplitBytes(), resources, config.timeout(), tellPeers,
                config.get(FlexLinkConfig.ENQUEUE_THREAD), config.get(FlexLinkConfig.GROUP_GATE), splitter);
        log.owned(0, comm, comm::abort); // it frees everything made so far; an abort also tells the peers
        if (board != null) {
            board.cancelWhen(comm::abortRequested); // an abort (or the watchdog) ends a wait for the peers
        }
        return comm;
    }

    /**
     * The path {@code name} from the {@link PathRegistry}, when every rank can run it; else null (one INFO
     * line says why). Every path, the built-in PCIe path too, is made here and nowhere else.
     */
    private static Path provided(CreationLog log, String name, PathContext context) {
        PathProvider provider = PathRegistry.find(name);
        String reason = provider == null ? "no provider on the class path (flexlink-native)"
                : context.size() > provider.maxRanks() ? "more than " + provider.maxRanks() + " ranks"
                : provider.unavailableReason(context);
        byte[][] votes = context.exchange().allGather(reason == null ? new byte[0]
                : reason.getBytes(StandardCharsets.UTF_8));
        for (int r = 0; r < votes.length; r++) {
            if (votes[r].length > 0) {
                if (context.rank() == 0) {
                    LOG.info("INIT {} path off: rank {}: {}", name, r, new String(votes[r], StandardCharsets.UTF_8));
                }
                return null;
            }
        }
        int mark = log.mark();
        Path p = provider.create(context);
        return p == null ? null : log.owned(mark, p, CreationLog.abortThenClose(p));
    }

    /** {@code flexlink.enqueueThread}: {@code auto} is on for the host backend only (see the setting's doc). */
    private static boolean primaryOn(FlexLinkConfig config, PrimaryTransport transport, RankDevices devices) {
        if (!config.paths().contains("primary")) {
            return false;
        }
        if (devices.anyShared() && !transport.allowsSharedDevices()) {
            LOG.info("INIT primary path off: {} does not allow several ranks on one device", transport.describe());
            return false;
        }
        return true;
    }

    private static String digest(FlexLinkConfig config) {
        return "paths=" + config.paths() + " share=" + config.shares() + " chunk="
                + config.get(FlexLinkConfig.CHUNK_BYTES) + " slots=" + config.get(FlexLinkConfig.SLOTS)
                + " minSplit=" + config.minSplitBytes() + " window=" + config.balanceWindow() + " budget="
                + config.tuningBudget();
    }

    /**
     * The tuning cache key: the machine's links, the rank count, the paths and the staging geometry (the
     * settings, and how many ranks one thread enqueues, which sizes the chunks and an {@code auto} area).
     */
    static String fingerprint(Backend backend, FlexLinkConfig config, int n, List<String> aux, EnqueueBudget budget) {
        String key = backend.fingerprint() + "|ranks=" + n + "|aux=" + aux + "|chunk="
                + config.get(FlexLinkConfig.CHUNK_BYTES) + "|slots=" + config.get(FlexLinkConfig.SLOTS)
                + "|perThread=" + budget.ranksPerThread()
                + "|version=" + Version.VERSION;
        try {
            byte[] sha = MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(sha);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
