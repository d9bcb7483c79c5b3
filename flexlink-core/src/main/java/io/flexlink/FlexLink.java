package io.flexlink;

import io.flexlink.bootstrap.LaunchEnv;
import io.flexlink.bootstrap.TcpRendezvous;
import io.flexlink.backend.Backends;
import io.flexlink.comm.CommunicatorFactory;
import io.flexlink.launch.Groups;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.hier.Hierarchy;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.RankExchange;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Map;

/**
 * Entry point: makes communicators, like {@code ncclCommInitAll} and {@code ncclCommInitRank}, and
 * groups calls like {@code ncclGroupStart}/{@code ncclGroupEnd}.
 *
 * <pre>{@code
 * Backend backend = FlexLink.backend();             // CUDA when a GPU is there, else the host backend
 * Communicator[] comms = FlexLink.initAll(backend, 0, 1, 2, 3);
 * comms[r].allReduce(send, recv, count, DataType.FLOAT32, ReduceOp.SUM, stream);
 * }</pre>
 */
public final class FlexLink {
    /** The library version. */
    public static final String VERSION = Version.VERSION;

    /**
     * The most ranks one communicator may have. A communicator is single-node, and its staging areas grow
     * with the square of the rank count (docs/operations.md), so far fewer fit in memory; the bound keeps a
     * mistaken count from allocating per-rank tables of billions of entries.
     */
    public static final int MAX_RANKS = 4096;

    private static volatile Backend defaultBackend;

    private FlexLink() {
    }

    /** The process's default backend, chosen by {@code flexlink.backend} (opened on first use). */
    public static Backend backend() {
        Backend b = defaultBackend;
        if (b == null) {
            synchronized (FlexLink.class) {
                b = defaultBackend;
                if (b == null) {
                    b = Backends.open(FlexLinkConfig.fromEnvironment());
                    defaultBackend = b;
                }
            }
        }
        return b;
    }

    /** Opens a backend for {@code config} (the caller owns and closes it). */
    public static Backend openBackend(FlexLinkConfig config) {
        return Backends.open(concluded(config));
    }

    /**
     * One communicator per device in {@code devices}, all created by this thread, on the default backend.
     * Its ranks are one process's, so they are one node's: it is never hierarchical.
     */
    public static Communicator[] initAll(int... devices) {
        return initAll(backend(), FlexLinkConfig.fromEnvironment(), devices);
    }

    /** One communicator per device in {@code devices} on {@code backend}. */
    public static Communicator[] initAll(Backend backend, int... devices) {
        return initAll(backend, FlexLinkConfig.fromEnvironment(), devices);
    }

    public static Communicator[] initAll(Backend backend, FlexLinkConfig config, int... devices) {
        checkBackend(backend);
        if (devices != null && devices.length > MAX_RANKS) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "devices: " + devices.length + " ranks, at most "
                    + MAX_RANKS + " in one communicator");
        }
        return CommunicatorFactory.initAll(backend, concluded(config), devices);
    }

    /** A fresh unique id for ranks that are threads of this process (like {@code ncclGetUniqueId}). */
    public static UniqueId getUniqueId() {
        return UniqueId.random();
    }

    /**
     * A fresh unique id that ranks in any process of this machine may join, rank 0 included (what the NCCL
     * facade's {@code ncclGetUniqueId} gives): send its bytes to every rank by any means. With
     * {@code flexlink.commId} ({@code FLEXLINK_COMM_ID=host:port}) rank 0 listens there from its
     * {@code initRank}; else the id's lobby listens on loopback at a port the system picks, until every rank
     * has met it or {@code flexlink.initTimeout} passed without a rank arriving (docs/operations.md).
     */
    public static UniqueId getUniqueIdForProcesses(FlexLinkConfig config) {
        return TcpRendezvous.anyProcess(concluded(config));
    }

    /**
     * A fresh unique id for ranks that may be other processes of this machine: binds rank 0's TCP
     * rendezvous now, at {@code host}:{@code port} ({@code port} 0 picks a free one; the bind address is
     * {@code flexlink.bootstrap.bind} when set). Send the id to every rank (e.g. {@link UniqueId#toBase64()});
     * rank 0 must call {@code initRank} in this process. Keep {@code host} on loopback or a
     * cluster-internal network: the id's secret is the only guard (docs/operations.md).
     */
    public static UniqueId getUniqueId(InetAddress host, int port) {
        if (host == null) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "host: null");
        }
        if (port < 0 || port > 0xffff) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "port: " + port + " is not in [0, 65535]");
        }
        return TcpRendezvous.listen(host, port, FlexLinkConfig.fromEnvironment().conclude());
    }

    /** {@link #getUniqueId(InetAddress, int)} with a host name or address literal. */
    public static UniqueId getUniqueId(String host, int port) {
        if (host == null) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "host: null");
        }
        try {
            return getUniqueId(InetAddress.getByName(host), port);
        } catch (UnknownHostException e) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "host: unknown host '" + host + "'", e);
        }
    }

    /**
     * This process's rank of a job started by a launcher — torchrun ({@code RANK}, {@code WORLD_SIZE},
     * {@code LOCAL_RANK}), OpenMPI ({@code OMPI_COMM_WORLD_RANK}, ...), PMI ({@code PMI_RANK}, ...) or Slurm
     * ({@code SLURM_PROCID}, ...), with {@code MASTER_ADDR} and {@code MASTER_PORT} — on the default backend
     * and the device of its local rank: rank 0 listens on MASTER_ADDR:MASTER_PORT, the others connect to it.
     * When the ranks span several nodes the communicator is hierarchical (FlexLink inside each node, rails
     * across nodes). Every process must make its communicators from the environment in the same order.
     */
    public static Communicator initFromEnv() {
        return initFromEnv(backend(), FlexLinkConfig.fromEnvironment(), System.getenv());
    }

    /** {@link #initFromEnv()} with a given backend, configuration and environment. */
    public static Communicator initFromEnv(Backend backend, FlexLinkConfig config, Map<String, String> env) {
        checkBackend(backend);
        concluded(config);
        if (env == null) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "env: null");
        }
        LaunchEnv launch = LaunchEnv.parse(env);
        if (launch.worldSize > MAX_RANKS) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "WORLD_SIZE: " + launch.worldSize + ", at most "
                    + MAX_RANKS + " ranks in one communicator");
        }
        int devices = backend.deviceCount();
        RankExchange exchange = TcpRendezvous.fromEnv(launch, config);
        return Hierarchy.initRank(backend, concluded(config), exchange, launch.worldSize, launch.rank,
                local -> launch.device(devices, local));
    }

    /** This thread's rank of an {@code nranks}-rank communicator identified by {@code id}, on the default backend. */
    public static Communicator initRank(int nranks, UniqueId id, int rank, int device) {
        return initRank(backend(), FlexLinkConfig.fromEnvironment(), nranks, id, rank, device);
    }

    /**
     * Like {@code ncclCommInitRank}. Ranks whose {@code flexlink.nodeId} (or host) differ make a
     * hierarchical communicator, as {@link #initFromEnv()} does. Inside a group (as NCCL's
     * {@code ncclGroupStart(); ncclCommInitRank(...) × n; ncclGroupEnd();}, one thread making several ranks)
     * the arguments are checked now and the creation is deferred: the outermost {@link #groupEnd()} creates
     * every rank of the group together and throws the first failure; the returned communicators are usable
     * after it (before, {@code getAsyncError()} is IN_PROGRESS and calls are INVALID_USAGE).
     */
    public static Communicator initRank(Backend backend, FlexLinkConfig config, int nranks, UniqueId id, int rank,
                                        int device) {
        checkBackend(backend);
        if (nranks > MAX_RANKS) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "nranks: " + nranks + ", at most " + MAX_RANKS
                    + " in one communicator");
        }
        FlexLinkConfig c = concluded(config);
        if (!Groups.active()) {
            return Hierarchy.initRank(backend, c, nranks, id, rank, device);
        }
        if (id == null || nranks < 1 || rank < 0 || rank >= nranks || device < 0 || device >= backend.deviceCount()) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, id == null ? "commId: null"
                    : nranks < 1 ? "nranks: " + nranks + " (must be at least 1)"
                    : rank < 0 || rank >= nranks ? "rank: " + rank + " is not in [0, " + nranks + ")"
                    : "device: " + device + " is not a device of the " + backend.name() + " backend");
        }
        return GroupedInit.defer(nranks, rank, device, () -> Hierarchy.initRank(backend, c, nranks, id, rank, device));
    }

    /**
     * Like {@code ncclCommInitRankScalable}: {@link #initRank(Backend, FlexLinkConfig, int, UniqueId, int, int)}
     * with several ids, the same ones in the same order on every rank (a name of its own: an overload would make
     * {@code initRank(…, null, …)} ambiguous). NCCL spreads its bootstrap over them (up to
     * one per rank); FlexLink's rendezvous is one server, rank 0's (or the lobby that leads to it), so the ranks
     * meet at {@link #scalableRendezvous the first id} and the others are only checked. An unused lobby closes by
     * itself after {@code flexlink.initTimeout}, as any id's that no rank joins.
     */
    public static Communicator initRankScalable(Backend backend, FlexLinkConfig config, int nranks, UniqueId[] ids,
                                                int rank, int device) {
        return initRank(backend, config, nranks, scalableRendezvous(ids, nranks), rank, device);
    }

    /**
     * The id of several ({@code ncclCommInitRankScalable}'s) at which FlexLink's ranks meet: the first, after
     * NCCL's checks (1 to {@code nranks} ids) and a check of every id (INVALID_ARGUMENT naming it).
     */
    public static UniqueId scalableRendezvous(UniqueId[] ids, int nranks) {
        if (ids == null) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "commIds: null");
        }
        if (ids.length < 1 || ids.length > Math.max(1, nranks)) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "nId: " + ids.length + " ids is not in [1, nranks = "
                    + nranks + "]");
        }
        for (int i = 0; i < ids.length; i++) {
            if (ids[i] == null) {
                throw new FlexLinkException(Result.INVALID_ARGUMENT, "commIds[" + i + "]: null");
            }
        }
        return ids[0];
    }

    private static void checkBackend(Backend backend) {
        if (backend == null) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "backend: null");
        }
    }

    /** Every setting resolved and checked now: a bad one fails at creation, naming it (INVALID_ARGUMENT). */
    private static FlexLinkConfig concluded(FlexLinkConfig config) {
        if (config == null) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "config: null");
        }
        return config.conclude();
    }

    /**
     * Like {@code ncclGroupSimulateEnd}: ends the innermost group without launching anything. The outermost
     * returns the seconds the group's calls would take and forgets them (NCCL's simulation enqueues nothing);
     * the communicators {@link #initRank} deferred in it are still made, as NCCL still runs a simulated group's
     * creations. An inner end returns NaN. The estimate ({@code launch.GroupEstimate}): per communicator the sum
     * of its calls' times, each the balancer's measured time for its collective and size where it has one, else
     * 10 µs plus its bus bytes at 25 GB/s; the group's is its slowest communicator's.
     *
     * @throws FlexLinkException INVALID_USAGE outside a group; a call's error when one of the group failed
     */
    public static double groupSimulateEnd() {
        double[] seconds = {Double.NaN};
        endGroup(() -> seconds[0] = Groups.simulateEnd());
        return seconds[0];
    }

    /**
     * Cancels this thread's group because a call of it failed before it reached a communicator (a layer above
     * FlexLink checked its own arguments, as the NCCL facade does): the outermost end launches nothing of the
     * group and throws {@code cause}, as when a call of the group fails inside FlexLink (NCCL's groups are
     * atomic). The first failure wins; outside a group nothing happens.
     */
    public static void groupFailed(FlexLinkException cause) {
        if (cause == null) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "cause: null");
        }
        Groups.current().fail(cause);
    }

    /** Starts a group of calls on this thread (like {@code ncclGroupStart}); groups nest. */
    public static void groupStart() {
        Groups.start();
    }

    /**
     * Ends the innermost group; the outermost launches the group's calls and creates the communicators
     * {@link #initRank} deferred in it (like {@code ncclGroupEnd}), throwing the first failure of either.
     */
    public static void groupEnd() {
        endGroup(Groups::end);
    }

    /** {@code end}, then at the outermost end the creations deferred in the group; throws the first failure. */
    private static void endGroup(Runnable end) {
        Throwable failure = null;
        try {
            end.run();
        } catch (RuntimeException | Error e) {
            failure = e;
        }
        if (!Groups.active()) {
            failure = GroupedInit.runPending(failure);
        }
        if (failure instanceof Error) {
            throw (Error) failure;
        }
        if (failure != null) {
            throw (RuntimeException) failure;
        }
    }
}
