package io.flexlink.hier;

import io.flexlink.Communicator;
import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.UniqueId;
import io.flexlink.bootstrap.InProcessRendezvous;
import io.flexlink.bootstrap.NodeIdentity;
import io.flexlink.bootstrap.NodeLayout;
import io.flexlink.bootstrap.Subgroups;
import io.flexlink.bootstrap.TcpRendezvous;
import io.flexlink.comm.CommSplitter;
import io.flexlink.comm.CommunicatorFactory;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.RankExchange;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntUnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Creates a rank's communicator the way {@code FlexLink.initRank}/{@code initFromEnv} do: one round of
 * the exchange tells every rank every rank's node ({@link NodeIdentity}); ranks of one node get a
 * single-node FlexLink communicator over the same exchange, ranks of several nodes a
 * {@link HierarchicalCommunicator}: a communicator per node and a rail per local index, each made over
 * a fresh rendezvous of its own ({@link Subgroups#split}), so that no subgroup depends on another's
 * sequence of rounds. Creation is a transaction: a rank that fails fails every exchange it holds (its
 * peers' rounds end at once with its error) and frees what it made; a last round of the job's exchange
 * confirms that every rank succeeded before any returns.
 */
public final class Hierarchy {
    private static final Logger LOG = LoggerFactory.getLogger(Hierarchy.class);

    private Hierarchy() {
    }

    /** {@code ncclCommInitRank}: every rank calls this with the same id, from its own thread or process. */
    public static Communicator initRank(Backend backend, FlexLinkConfig config, int nranks, UniqueId id, int rank,
                                       int device) {
        if (id == null) {
            throw invalid("commId: null");
        }
        if (nranks < 1) {
            throw invalid("nranks: " + nranks + " (must be at least 1)");
        }
        if (rank < 0 || rank >= nranks) {
            throw invalid("rank: " + rank + " is not in [0, " + nranks + ")");
        }
        checkDevice(backend, device);
        if (id.address() != null) { // ranks may be processes: they meet over TCP
            return initRank(backend, config, TcpRendezvous.join(id, nranks, rank, config), nranks, rank,
                    local -> device);
        }
        RankExchange exchange = InProcessRendezvous.join(id.token(), nranks, rank, config.initTimeout());
        try {
            return initRank(backend, config, exchange, nranks, rank, local -> device);
        } finally {
            InProcessRendezvous.leave(id.token());
        }
    }

    /**
     * Creates one rank over {@code exchange}, which the communicator owns. {@code deviceOf} maps the
     * rank's index on its node to its device (a launcher that names no local rank lets the node decide).
     */
    public static Communicator initRank(Backend backend, FlexLinkConfig config, RankExchange exchange, int nranks,
                                        int rank, IntUnaryOperator deviceOf) {
        NodeLayout layout;
        int device;
        try {
            layout = NodeLayout.exchange(exchange, NodeIdentity.of(config));
            if (layout.ranks() != nranks) {
                throw new FlexLinkException(Result.INTERNAL_ERROR, "the exchange has " + layout.ranks()
                        + " ranks, not " + nranks);
            }
            device = deviceOf.applyAsInt(layout.localIndex(rank));
            checkDevice(backend, device);
        } catch (RuntimeException | Error e) {
            exchange.fail(e);
            throw e;
        }
        if (layout.nodes() == 1) {
            return CommunicatorFactory.initRank(backend, config, exchange, nranks, rank, device);
        }
        return build(backend, config, exchange, layout, rank, device);
    }

    /**
     * Every rank of every node runs the same backend and build, and cuts its calls over the rails alike. Before
     * the rails: how they are made depends on the backend (a node whose CUDA failed to load falls back to the host
     * backend under {@code auto}, and would run other creation rounds than its peers).
     */
    private static void agreeAcrossNodes(Backend backend, FlexLinkConfig config, RankExchange parent) {
        parent.requireAlike("backend=" + backend.name() + " version=" + io.flexlink.Version.VERSION
                + " hier.pieceBytes=" + config.get(FlexLinkConfig.HIER_PIECE_BYTES) + " chunk=" + config.chunkBytes(),
                "every rank of every node must run the same backend and build and cut its calls alike");
    }

    private static Communicator build(Backend backend, FlexLinkConfig config, RankExchange parent, NodeLayout layout,
                                      int rank, int device) {
        List<AutoCloseable> made = new ArrayList<>();
        List<RankExchange> held = new ArrayList<>();
        AtomicReference<HierarchicalCommunicator> built = new AtomicReference<>();
        try {
            layout.requireUniform();
            if (!layout.nodeMajor() && !layout.localMajor()) {
                throw new FlexLinkException(Result.INVALID_USAGE, "ranks are placed on the nodes neither in blocks "
                        + "(rank = node × L + local index) nor round-robin (rank = local index × N + node): "
                        + layout.describe() + "; a multi-node communicator needs one of the two (Slurm's block or "
                        + "cyclic distribution, mpirun --map-by slot or node)");
            }
            agreeAcrossNodes(backend, config, parent);
            int node = layout.nodeOf(rank);
            int local = layout.localIndex(rank);
            int perNode = layout.ranksPerNode();
            InetAddress address = TcpRendezvous.localAddress(parent);
            Subgroups.Subgroup nodeGroup = Subgroups.split(parent, rank, perNode > 1 ? node : Subgroups.NO_COLOR,
                    rank, address, config);
            if (nodeGroup != null) {
                held.add(nodeGroup.exchange());
            }
            Subgroups.Subgroup railGroup = Subgroups.split(parent, rank, local, node, address, config);
            held.add(railGroup.exchange());
            Communicator intra = null;
            if (nodeGroup != null) {
                held.remove(nodeGroup.exchange()); // the node's communicator owns it now, and fails it itself
                intra = CommunicatorFactory.initRank(backend, config, nodeGroup.exchange(), perNode, nodeGroup.rank(),
                        device);
                made.add(intra);
            }
            RailComm rail = Rails.create(backend, config, railGroup.exchange(), railGroup.rank(), layout.nodes(), device,
                    address, () -> {
                        HierarchicalCommunicator c = built.get();
                        if (c != null) {
                            c.railFailed();
                        }
                    });
            made.add(rail);
            PeerNet peers = Rails.peers(backend, config, parent, rank, layout.ranks(), device, layout, address, () -> {
                HierarchicalCommunicator c = built.get();
                if (c != null) {
                    c.railFailed();
                }
            });
            if (peers != null) {
                made.add(peers);
            }
            parent.allGather(new byte[0]); // every rank of every node is ready
            held.remove(railGroup.exchange());
            railGroup.exchange().close(); // the rail's own links watch its peers from now on
            HierRank h = new HierRank(rank, layout, intra, rail, peers, config.minSplitBytes(),
                    config.get(FlexLinkConfig.HIER_PIECE_BYTES));
            CommSplitter splitter = new CommSplitter(parent, rank, config, (childExchange, size, childRank) ->
                    initRank(backend, config, childExchange, size, childRank, childLocal -> device), true);
            HierarchicalCommunicator comm = new HierarchicalCommunicator(backend, h, device, parent, splitter);
            built.set(comm);
            parent.onPeerLost(comm::peerLost);
            if (rank == 0) {
                LOG.info("INIT {} ranks: {}, rails {} (ranks of one local index), node communicators {}",
                        layout.ranks(), layout.describe(), rail.describe(), intra == null ? "none (one rank per node)"
                                : "FlexLink over " + config.paths());
            }
            return comm;
        } catch (RuntimeException | Error e) {
            for (RankExchange x : held) {
                x.fail(e); // the subgroups' peers stop waiting for this rank at once
            }
            parent.fail(e);
            for (int i = made.size() - 1; i >= 0; i--) {
                abortQuietly(made.get(i), e);
            }
            if (e instanceof FlexLinkException || e instanceof Error) {
                throw e;
            }
            throw new FlexLinkException(Result.INTERNAL_ERROR, "multi-node communicator creation failed on rank " + rank
                    + ": " + e, e);
        }
    }

    private static void abortQuietly(AutoCloseable c, Throwable cause) {
        try {
            if (c instanceof Communicator comm) {
                comm.abort();
            } else if (c instanceof RailComm r) {
                r.abort();
            } else if (c instanceof PeerNet p) {
                p.abort();
            }
            c.close();
        } catch (Exception e) {
            cause.addSuppressed(e);
        }
    }

    private static void checkDevice(Backend backend, int device) {
        if (device < 0 || device >= backend.deviceCount()) {
            throw invalid("device: " + device + " is not a device of the " + backend.name() + " backend");
        }
    }

    private static FlexLinkException invalid(String message) {
        return new FlexLinkException(Result.INVALID_ARGUMENT, message);
    }
}
