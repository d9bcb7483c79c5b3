package io.flexlink.bootstrap;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.UniqueId;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.RankExchange;
import java.io.IOException;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.channels.ServerSocketChannel;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The rendezvous of ranks in different processes, over TCP: rank 0 serves it (at the address and port
 * in the unique id), the others connect. The exchange it returns is an all-gather of byte arrays, round
 * after round, each round bounded by {@code flexlink.initTimeout}; a failed round names the missing
 * ranks. Peers must present the id's secret. The connections stay open while the communicator lives,
 * so that a rank whose process dies is noticed: {@link RankExchange#onPeerLost} listeners hear of it on
 * every surviving rank (the communicator factory aborts the communicator then). A rank whose creation
 * fails says so ({@link RankExchange#fail}): the others' rounds fail at once with its error.
 */
public final class TcpRendezvous {
    private static final Logger LOG = LoggerFactory.getLogger(TcpRendezvous.class);
    /** Servers bound by {@link #listen} in this process and not yet joined by rank 0, by token. */
    private static final Map<String, RendezvousServer> SERVING = new ConcurrentHashMap<>();
    /**
     * Communicators made from the environment so far, per rendezvous and rank (part of their derived
     * token); per rank, so that threads playing ranks of one job in one JVM (tests) count alike.
     */
    private static final Map<String, AtomicInteger> FROM_ENV = new ConcurrentHashMap<>();

    private TcpRendezvous() {
    }

    /**
     * Binds rank 0's rendezvous and returns the id to hand to every rank: peers connect to
     * {@code advertised}:{@code port} ({@code port} 0 picks a free one). The server binds to
     * {@code flexlink.bootstrap.bind} when set, else to {@code advertised}. Rank 0 must then call
     * {@code initRank} in this process; the port stays bound (and peers may join) until then, however
     * long that takes, or until {@link #cancel} gives it up.
     */
    public static UniqueId listen(InetAddress advertised, int port, FlexLinkConfig config) {
        return listen(advertised, port, config, RendezvousServer.HELLO_TIMEOUT);
    }

    /** {@link #listen}, with the time a connection may take to say its HELLO (tests shorten it). */
    static UniqueId listen(InetAddress advertised, int port, FlexLinkConfig config, Duration helloTimeout) {
        if (advertised.isAnyLocalAddress()) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "address: " + advertised.getHostAddress()
                    + " is not an address peers can connect to; give rank 0's address (bind to every interface "
                    + "with flexlink.bootstrap.bind=0.0.0.0)");
        }
        InetAddress bindTo = bindAddress(config, advertised);
        ServerSocketChannel listener = bind(bindTo, port);
        int bound = listener.socket().getLocalPort();
        UniqueId id = UniqueId.withAddress(advertised.getAddress(), bound);
        RendezvousServer server = new RendezvousServer(listener, id.tokenBytes(), id.secret(),
                where(advertised, bound), helloTimeout).advertise(advertised);
        SERVING.put(id.token(), server);
        return id;
    }

    /**
     * Gives up the rendezvous that {@link #listen} bound for {@code id} when rank 0 will not call
     * {@code initRank} with it after all: frees the port, stops its threads and refuses the peers that
     * joined (they fail with REMOTE_ERROR). Returns false when there is nothing to give up (rank 0
     * already took the rendezvous, or it was not bound in this process).
     */
    public static boolean cancel(UniqueId id) {
        RendezvousServer server = SERVING.remove(id.token());
        if (server == null) {
            return false;
        }
        server.fail(new FlexLinkException(Result.INVALID_USAGE, "the unique id's rendezvous at " + server.where()
                + " was cancelled by rank 0's process before rank 0 joined"));
        return true;
    }

    /** True when rank 0's rendezvous of {@code id} was bound by this process and awaits rank 0. */
    public static boolean serves(UniqueId id) {
        return SERVING.containsKey(id.token());
    }

    /**
     * A fresh id that ranks in any process of this machine may join, whichever process runs rank 0
     * (NCCL's {@code ncclGetUniqueId}): with {@code flexlink.commId} set, that address, where rank 0 will
     * listen from its {@code initRank}; else a {@link RendezvousLobby} on loopback at a port the system picks,
     * open until every rank met it or {@code flexlink.initTimeout} passed without a rank arriving.
     */
    public static UniqueId anyProcess(FlexLinkConfig config) {
        String fixed = config.get(FlexLinkConfig.COMM_ID);
        if (!fixed.isEmpty()) {
            int colon = fixed.lastIndexOf(':');
            InetAddress host;
            try {
                host = InetAddress.getByName(fixed.substring(0, colon));
            } catch (UnknownHostException e) {
                throw new FlexLinkException(Result.INVALID_ARGUMENT, "flexlink.commId (FLEXLINK_COMM_ID): unknown host '"
                        + fixed.substring(0, colon) + "'", e);
            }
            if (host.isAnyLocalAddress()) {
                throw new FlexLinkException(Result.INVALID_ARGUMENT, "flexlink.commId (FLEXLINK_COMM_ID): " + fixed
                        + " is not an address peers can connect to (bind with flexlink.bootstrap.bind instead)");
            }
            return UniqueId.withAddress(host.getAddress(), Integer.parseInt(fixed.substring(colon + 1)),
                    UniqueId.RANK0_BINDS);
        }
        InetAddress loopback = InetAddress.getLoopbackAddress();
        ServerSocketChannel listener = bind(loopback, 0);
        return RendezvousLobby.open(listener, loopback, where(loopback, listener.socket().getLocalPort()),
                config.initTimeout());
    }

    /** The exchange of {@code rank} for an id that carries rank 0's address (rank 0: in the process that made it). */
    public static RankExchange join(UniqueId id, int nranks, int rank, Duration timeout) {
        return join(id, nranks, rank, timeout, null);
    }

    /** {@link #join(UniqueId, int, int, Duration)} with rank 0's bind address of a {@link UniqueId#RANK0_BINDS} id. */
    public static RankExchange join(UniqueId id, int nranks, int rank, FlexLinkConfig config) {
        return join(id, nranks, rank, config.initTimeout(), config);
    }

    private static RankExchange join(UniqueId id, int nranks, int rank, Duration timeout, FlexLinkConfig config) {
        byte[] address = id.address();
        if (address == null) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "commId: " + id + " carries no rendezvous address");
        }
        InetAddress host = inet(address);
        if (rank == 0 && id.flags() != 0) {
            return rankZeroServes(id, host, nranks, timeout, config);
        }
        if (rank == 0) {
            RendezvousServer server = SERVING.remove(id.token());
            if (server == null) {
                throw new FlexLinkException(Result.INVALID_USAGE, "rank 0 must call initRank in the process that "
                        + "made the unique id with getUniqueId(host, port), once (rendezvous " + where(host, id.port())
                        + ")");
            }
            return nranks == 1 ? closeAfterOne(server.attach(1, timeout)) : server.attach(nranks, timeout);
        }
        return RendezvousClient.connect(new InetSocketAddress(host, id.port()), where(host, id.port()),
                id.tokenBytes(), id.secret(), rank, nranks, timeout);
    }

    /**
     * The exchange of this process in a job launched from a launcher's environment ({@link LaunchEnv}):
     * rank 0 listens on MASTER_ADDR:MASTER_PORT (or {@code flexlink.bootstrap.bind}) for as long as any
     * of its communicators from the environment lives, the others connect, retrying until the timeout.
     * Every process must make its communicators from the environment in the same order. A rank 0 that
     * cannot bind because rank 0 of a job with the same id listens there makes both jobs fail.
     */
    public static RankExchange fromEnv(LaunchEnv env, FlexLinkConfig config) {
        int generation = FROM_ENV.computeIfAbsent(env.masterAddr + ":" + env.masterPort + "#" + env.rank,
                k -> new AtomicInteger()).getAndIncrement();
        if (env.worldSize == 1) {
            return mine -> new byte[][] {mine.clone()};
        }
        InetAddress master;
        try {
            master = InetAddress.getByName(env.masterAddr);
        } catch (UnknownHostException e) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "MASTER_ADDR='" + env.masterAddr
                    + "': unknown host", e);
        }
        UniqueId id = env.uniqueId(master.getAddress(), config.secret(), config.get(FlexLinkConfig.JOB_ID), generation);
        String where = where(master, env.masterPort);
        Duration timeout = config.initTimeout();
        if (env.rank != 0) {
            return RendezvousClient.connect(new InetSocketAddress(master, env.masterPort), where, id.tokenBytes(),
                    id.secret(), env.rank, env.worldSize, timeout);
        }
        InetAddress bind = rankZeroBind(config, env.masterAddr, master);
        try {
            return SharedPort.serve(bind, env.masterPort, id.tokenBytes(), id.secret(), where).advertise(master)
                    .attach(env.worldSize, timeout);
        } catch (BindException e) {
            // taken: if by rank 0 of a job with this id, it learns of us and stops too (a collision)
            String answer = RendezvousClient.claimRankZero(new InetSocketAddress(master, env.masterPort),
                    id.tokenBytes(), id.secret(), env.worldSize);
            throw new FlexLinkException(Result.SYSTEM_ERROR, "rank 0 cannot listen on " + where(bind, env.masterPort)
                    + ": " + e.getMessage() + (answer != null ? "; the port is another FlexLink rendezvous, which "
                    + "answered: " + answer : " (port taken by another job? an address of another host? set "
                    + "flexlink.bootstrap.bind / FLEXLINK_BOOTSTRAP_BIND)"), e);
        } catch (IOException e) {
            throw new FlexLinkException(Result.SYSTEM_ERROR, "rank 0 cannot listen on " + where(bind, env.masterPort)
                    + ": " + e, e);
        }
    }

    /**
     * Where rank 0 of an environment launch binds: {@code flexlink.bootstrap.bind} when set; every
     * interface when MASTER_ADDR is a name that resolves to loopback here although it is not
     * {@code localhost} (a hosts-file alias of this host's name: the other nodes resolve it to this host's
     * address, which a loopback listener would not answer); else MASTER_ADDR itself.
     */
    static InetAddress rankZeroBind(FlexLinkConfig config, String masterAddr, InetAddress master) {
        if (config.bootstrapBind() != null) {
            return bindAddress(config, master);
        }
        boolean literal = masterAddr.matches("[0-9.]+") || masterAddr.contains(":");
        if (master.isLoopbackAddress() && !literal && !masterAddr.equalsIgnoreCase("localhost")) {
            InetAddress any = master instanceof java.net.Inet6Address ? new InetSocketAddress("::", 0).getAddress()
                    : new InetSocketAddress("0.0.0.0", 0).getAddress();
            LOG.info("INIT rendezvous: MASTER_ADDR={} resolves to {} here; rank 0 listens on every interface so that "
                    + "other nodes reach it", masterAddr, master.getHostAddress());
            return any;
        }
        return master;
    }

    /**
     * An address of this host that the peers of {@code exchange} can reach: the local end of a rendezvous
     * client's connection, rank 0's rendezvous address; loopback for an exchange within one process.
     */
    public static InetAddress localAddress(RankExchange exchange) {
        if (exchange instanceof RendezvousClient c) {
            return c.localAddress();
        }
        if (exchange instanceof RendezvousServer s) {
            return s.advertised();
        }
        return InetAddress.getLoopbackAddress();
    }

    /**
     * Rank 0 of an id it did not bind when the id was made: listens now, at the id's port for a
     * {@link UniqueId#RANK0_BINDS} id, else at a free port of the id's address, which it tells the lobby.
     */
    private static RankExchange rankZeroServes(UniqueId id, InetAddress host, int nranks, Duration timeout,
                                               FlexLinkConfig config) {
        boolean lobby = id.flags() == UniqueId.LOBBY;
        if (lobby && nranks == 1) {
            RendezvousLobby.register(id, 1, 0, timeout); // nobody to send on: the lobby closes
            return mine -> new byte[][] {mine.clone()};
        }
        InetAddress bindTo = lobby || config == null ? host : bindAddress(config, host);
        ServerSocketChannel listener = bind(bindTo, lobby ? 0 : id.port());
        int port = listener.socket().getLocalPort();
        RendezvousServer server = new RendezvousServer(listener, id.tokenBytes(), id.secret(), where(host, port),
                RendezvousServer.HELLO_TIMEOUT).advertise(host);
        try {
            server.attach(nranks, timeout);
            if (lobby) {
                RendezvousLobby.register(id, nranks, port, timeout);
            }
        } catch (RuntimeException e) {
            server.fail(e);
            throw e;
        }
        return nranks == 1 ? closeAfterOne(server) : server;
    }

    static void forget(RendezvousServer server) {
        SERVING.values().remove(server);
    }

    private static RankExchange closeAfterOne(RendezvousServer server) {
        server.close(); // a single rank needs no peers and no port
        return mine -> new byte[][] {mine.clone()};
    }

    private static InetAddress bindAddress(FlexLinkConfig config, InetAddress advertised) {
        String bind = config.bootstrapBind();
        if (bind == null) {
            return advertised;
        }
        try {
            return InetAddress.getByName(bind);
        } catch (UnknownHostException e) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "flexlink.bootstrap.bind: unknown address '"
                    + bind + "'", e);
        }
    }

    /** Binds with SO_REUSEADDR, so that a port of a finished job in TIME_WAIT can be taken again. */
    private static ServerSocketChannel bind(InetAddress address, int port) {
        ServerSocketChannel s = null;
        try {
            s = ServerSocketChannel.open();
            s.socket().setReuseAddress(true);
            s.bind(new InetSocketAddress(address, port), 128);
            return s;
        } catch (IOException e) {
            if (s != null) {
                try {
                    s.close();
                } catch (IOException ignored) {
                    // nothing bound
                }
            }
            throw new FlexLinkException(Result.SYSTEM_ERROR, "rank 0 cannot listen on " + where(address, port) + ": "
                    + e.getMessage() + " (port taken by another job? an address of another host? set "
                    + "flexlink.bootstrap.bind / FLEXLINK_BOOTSTRAP_BIND)", e);
        }
    }

    private static InetAddress inet(byte[] address) {
        try {
            return InetAddress.getByAddress(address);
        } catch (UnknownHostException e) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "commId: bad address bytes", e);
        }
    }

    private static String where(InetAddress a, int port) {
        String h = a.getHostAddress();
        return (h.contains(":") ? "[" + h + "]" : h) + ":" + port;
    }
}
