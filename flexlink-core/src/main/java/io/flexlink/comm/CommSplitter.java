package io.flexlink.comm;

import io.flexlink.Communicator;
import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.bootstrap.Subgroups;
import io.flexlink.bootstrap.TcpRendezvous;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.launch.Groups;
import io.flexlink.runtime.RankExchange;
import java.util.Optional;

/**
 * {@link Communicator#split} for one rank: the parent's own exchange (kept open for the parent's life)
 * carries the colors and keys, {@link Subgroups#split} gives each color a fresh rendezvous of its own, and
 * the child is created over that rendezvous exactly as {@code initRank} creates a communicator — so it is
 * a full communicator whose staging, paths and balancer belong to its ranks alone, and which shares
 * nothing with the parent once it exists. Two rounds of the parent's exchange per split, then the
 * child's own creation rounds among its members only.
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
