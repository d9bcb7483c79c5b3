package io.flexlink.comm;

import io.flexlink.Communicator;
import io.flexlink.FlexLinkException;
import io.flexlink.Result;
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

    public CommSplitter(RankExchange parent, int rank, FlexLinkConfig config, ChildMaker maker) {
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
