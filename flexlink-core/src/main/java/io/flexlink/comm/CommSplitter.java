package io.flexlink.comm;

import io.flexlink.Communicator;
import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.UniqueId;
import io.flexlink.bootstrap.InProcessRendezvous;
import io.flexlink.bootstrap.NodeIdentity;
import io.flexlink.bootstrap.NodeLayout;
import io.flexlink.bootstrap.Subgroups;
import io.flexlink.bootstrap.TcpRendezvous;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.launch.Groups;
import io.flexlink.runtime.RankExchange;
import io.flexlink.validate.Validator;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Optional;

/**
 * {@link Communicator#split} for one rank: the parent's own exchange (kept open for the parent's life)
 * carries the colors and keys, {@link Subgroups#split} gives each color a fresh rendezvous of its own, and
 * the child is created over that rendezvous exactly as {@code initRank} creates a communicator — so it is
 * a full communicator whose staging, paths and balancer belong to its ranks alone, and which shares
 * nothing with the parent once it exists. Two rounds of the parent's exchange per split, then the
 * child's own creation rounds among its members only. A shrink is a split with one color for the ranks kept,
 * after one more round that checks every rank passed the same list. The splitter holds the parent's exchange
 * for the parent's life ({@link #closeParent}), so that a split can follow an abort or a revoke.
 */
public final class CommSplitter {
    /** Creates this rank's child over {@code exchange} (which the child then owns and closes). */
    @FunctionalInterface
    public interface ChildMaker {
        Communicator make(RankExchange exchange, int size, int rank);
    }

    private final RankExchange parent;
    private final int rank;
    private final FlexLinkConfig config;
    private final ChildMaker maker;
    private final boolean meetsNodes;
    /** The id {@link #growId} gave and no grow consumed yet (NCCL allows one at a time); guarded by this. */
    private UniqueId pendingGrowId;

    /** @param meetsNodes the maker exchanges the ranks' node layout itself (as a multi-node communicator's does) */
    public CommSplitter(RankExchange parent, int rank, FlexLinkConfig config, ChildMaker maker, boolean meetsNodes) {
        this.meetsNodes = meetsNodes;
        this.parent = parent;
        this.rank = rank;
        this.config = config;
        this.maker = maker;
    }

    /**
     * One rank's part of {@code Communicator.shrink}: every rank of the parent calls it with the same ranks to
     * leave out (in any order); those get no child, the others one of their own, ranked as here. Bad lists are
     * refused before any round, or (different lists) after the first one, on every rank alike.
     */
    public synchronized Optional<Communicator> shrink(int[] excluded, int size) {
        int[] sorted = Validator.checkExcluded(excluded, size);
        if (Groups.active()) {
            throw new FlexLinkException(Result.INVALID_USAGE, "shrink: rank " + rank + " is inside a group "
                    + "(FlexLink.groupStart); shrink outside groups, from one thread per rank");
        }
        ByteBuffer mine = ByteBuffer.allocate(4 * sorted.length);
        for (int r : sorted) {
            mine.putInt(r);
        }
        byte[][] all = parent.allGather(mine.array());
        for (int r = 0; r < all.length; r++) {
            if (!Arrays.equals(all[r], mine.array())) {
                int[] theirs = new int[all[r].length / 4];
                ByteBuffer.wrap(all[r]).asIntBuffer().get(theirs);
                throw new FlexLinkException(Result.INVALID_ARGUMENT, "excluded: rank " + r + " passed "
                        + Arrays.toString(theirs) + ", rank " + rank + " " + Arrays.toString(sorted)
                        + "; every rank must exclude the same ranks");
            }
        }
        boolean out = Arrays.binarySearch(sorted, rank) >= 0;
        // the key is the parent rank: the kept ranks stay in their order, the gaps closed (NCCL's shrink)
        return split(out ? Subgroups.NO_COLOR : 0, rank);
    }

    /**
     * {@code Communicator.growId()}: a fresh id that ranks in any process of this machine may join (as
     * {@code FlexLink.getUniqueIdForProcesses}), for one grow; a second before a grow consumed the first is
     * INVALID_USAGE, as NCCL's ncclCommGetUniqueId.
     */
    public synchronized UniqueId growId() {
        if (pendingGrowId != null) {
            throw new FlexLinkException(Result.INVALID_USAGE, "growId: rank " + rank + "'s previous grow id was not "
                    + "consumed by a grow yet (one at a time)");
        }
        pendingGrowId = TcpRendezvous.anyProcess(config);
        return pendingGrowId;
    }

    /**
     * One existing rank's part of {@code Communicator.grow}: one round of the parent carries the one rank's id
     * (every rank learns it; none or two is INVALID_ARGUMENT on every rank), then this rank is rank {@code rank}
     * of {@code nRanks} over it, where the new ranks join with initRank.
     */
    public synchronized Communicator grow(int nRanks, UniqueId id, int size) {
        if (nRanks <= size) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "nRanks: " + nRanks + " is not more than the "
                    + size + " ranks the communicator has");
        }
        if (Groups.active()) {
            throw new FlexLinkException(Result.INVALID_USAGE, "grow: rank " + rank + " is inside a group "
                    + "(FlexLink.groupStart); grow outside groups, from one thread per rank");
        }
        byte[][] all = parent.allGather(id == null ? new byte[0] : id.toBytes());
        int root = -1;
        for (int r = 0; r < all.length; r++) {
            if (all[r].length > 0) {
                if (root >= 0) {
                    throw new FlexLinkException(Result.INVALID_ARGUMENT, "uniqueId: ranks " + root + " and " + r
                            + " both passed one; only the grow's root does (the others pass null)");
                }
                root = r;
            }
        }
        if (root < 0) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "uniqueId: no rank passed one; the grow's root "
                    + "passes the id of its growId()");
        }
        UniqueId chosen = UniqueId.fromBytes(all[root]);
        if (chosen.equals(pendingGrowId)) {
            pendingGrowId = null; // consumed: growId may give the next
        }
        try {
            if (chosen.address() != null) {
                return grown(TcpRendezvous.join(chosen, nRanks, rank, config), nRanks);
            }
            try {
                return grown(InProcessRendezvous.join(chosen.token(), nRanks, rank, config.initTimeout()), nRanks);
            } finally {
                InProcessRendezvous.leave(chosen.token());
            }
        } catch (FlexLinkException e) {
            throw e;
        } catch (RuntimeException e) {
            throw new FlexLinkException(Result.INTERNAL_ERROR, "grow: rank " + rank + "'s creation failed: " + e, e);
        }
    }

    /**
     * This rank of the grown communicator over {@code x}: the new ranks' initRank exchanges the node layout first,
     * so a maker that does not (a single-node parent's) has that round here, and grows on its own node only.
     */
    private Communicator grown(RankExchange x, int nRanks) {
        if (!meetsNodes) {
            try {
                NodeLayout layout = NodeLayout.exchange(x, NodeIdentity.of(config));
                if (layout.nodes() != 1) {
                    throw new FlexLinkException(Result.INVALID_USAGE, "grow: the grown ranks span " + layout.nodes()
                            + " nodes; a single-node communicator grows with ranks of its own node");
                }
            } catch (RuntimeException e) {
                x.fail(e);
                throw e;
            }
        }
        return maker.make(x, nRanks, rank);
    }

    /** Closes the parent's exchange (a goodbye to its ranks): the parent's close(). */
    public void closeParent() {
        parent.close();
    }

    /**
     * One rank's part of a split; the caller checked that the parent is usable. Serialized per rank: two
     * threads splitting one rank at once would interleave their rounds of the parent's exchange.
     */
    public synchronized Optional<Communicator> split(int color, int key) {
        if (Groups.active()) {
            // the child must exist when split returns, and a group defers its work to groupEnd
            throw new FlexLinkException(Result.INVALID_USAGE, "split: rank " + rank + " is inside a group "
                    + "(FlexLink.groupStart); split outside groups, from one thread per rank");
        }
        try {
            Subgroups.Subgroup group = Subgroups.split(parent, rank, color, key, TcpRendezvous.localAddress(parent),
                    config);
            if (group == null) {
                return Optional.empty();
            }
            return Optional.of(maker.make(group.exchange(), group.size(), group.rank()));
        } catch (FlexLinkException e) {
            throw e;
        } catch (RuntimeException e) {
            // a public entry point throws FlexLinkException only
            throw new FlexLinkException(Result.INTERNAL_ERROR, "split: rank " + rank + "'s child creation failed: "
                    + e, e);
        }
    }
}
