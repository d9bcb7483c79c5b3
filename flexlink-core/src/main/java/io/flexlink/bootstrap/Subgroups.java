package io.flexlink.bootstrap;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.UniqueId;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.RankExchange;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/**
 * Splits the ranks of an exchange into subgroups, each with a fresh rendezvous of its own, the way
 * {@code ncclCommSplit} groups ranks: ranks that pass the same color form a group, ordered by key (then
 * by parent rank); {@link #NO_COLOR} joins none, and a color below it is refused on every rank. The
 * group's first rank (its leader) makes a new unique id
 * — a TCP rendezvous it serves when the parent's ranks are processes, an in-process token when they are
 * threads — and the parent exchange hands it to the members. A subgroup's exchange therefore depends on
 * no other group's and on no later round of the parent: groups can be created in any order and at the
 * same time. Two rounds of the parent, on every rank of it.
 */
public final class Subgroups {
    /** The color of a rank that joins no subgroup (NCCL_SPLIT_NOCOLOR). */
    public static final int NO_COLOR = -1;

    private Subgroups() {
    }

    /** One rank's subgroup: its own exchange, its rank in it, and the members' parent ranks by subgroup rank. */
    public record Subgroup(int color, int rank, int[] members, RankExchange exchange) {
        public int size() {
            return members.length;
        }

        /** The parent rank of subgroup rank {@code r}. */
        public int parentRank(int r) {
            return members[r];
        }
    }

    /**
     * Splits; every rank of {@code parent} calls this together. Returns null for a negative color.
     * {@code advertise} is the address a TCP leader listens at (reachable by its members); the
     * subgroup's rounds are bounded by {@code flexlink.initTimeout}.
     */
    public static Subgroup split(RankExchange parent, int rank, int color, int key, InetAddress advertise,
                                 FlexLinkConfig config) {
        byte[][] keys = parent.allGather(ByteBuffer.allocate(8).putInt(color).putInt(key).array());
        checkColors(keys, rank); // on every rank alike, after the round: no rank is left waiting in the next one
        int[] members = color < 0 ? new int[0] : members(keys, color);
        boolean leader = members.length > 0 && members[0] == rank;
        boolean tcp = parent.crossProcess();
        UniqueId id = !leader ? null : tcp ? TcpRendezvous.listen(advertise, 0, config) : UniqueId.random();
        try {
            byte[][] ids = parent.allGather(leader ? id.toBytes() : new byte[0]);
            if (color < 0) {
                return null;
            }
            UniqueId mine = UniqueId.fromBytes(ids[members[0]]);
            int subRank = indexOf(members, rank);
            RankExchange exchange = tcp ? TcpRendezvous.join(mine, members.length, subRank, config.initTimeout())
                    : new Leaving(InProcessRendezvous.join(mine.token(), members.length, subRank,
                            config.initTimeout()), mine.token());
            return new Subgroup(color, subRank, members, exchange);
        } catch (RuntimeException | Error e) {
            if (leader && tcp) {
                TcpRendezvous.cancel(id); // frees the port; members that joined already are refused
            }
            throw e;
        }
    }

    /** Every rank throws when any rank passed a color below {@link #NO_COLOR}, naming the first such rank. */
    private static void checkColors(byte[][] keys, int rank) {
        for (int r = 0; r < keys.length; r++) {
            int c = keys[r].length == 8 ? ByteBuffer.wrap(keys[r]).getInt() : 0;
            if (c < NO_COLOR) {
                throw new FlexLinkException(Result.INVALID_ARGUMENT, "color: " + c + " on rank " + r
                        + (r == rank ? " (this rank)" : "") + "; a color is >= 0, or " + NO_COLOR
                        + " (no color) for a rank that joins no group");
            }
        }
    }

    /** The parent ranks of color {@code color}, ordered by (key, rank). */
    private static int[] members(byte[][] keys, int color) {
        List<int[]> in = new ArrayList<>();
        for (int r = 0; r < keys.length; r++) {
            if (keys[r].length != 8) {
                throw new FlexLinkException(Result.INTERNAL_ERROR, "split: rank " + r + " sent " + keys[r].length
                        + " bytes, not a color and a key");
            }
            ByteBuffer b = ByteBuffer.wrap(keys[r]);
            if (b.getInt() == color) {
                in.add(new int[] {b.getInt(), r});
            }
        }
        in.sort(Comparator.<int[]>comparingInt(x -> x[0]).thenComparingInt(x -> x[1]));
        return in.stream().mapToInt(x -> x[1]).toArray();
    }

    private static int indexOf(int[] a, int v) {
        for (int i = 0; i < a.length; i++) {
            if (a[i] == v) {
                return i;
            }
        }
        throw new IllegalStateException(v + " not in " + Arrays.toString(a));
    }

    /** An in-process subgroup's exchange: leaving the rendezvous when closed lets its entry go. */
    private static final class Leaving implements RankExchange {
        private final RankExchange inner;
        private final String token;
        private boolean left;

        Leaving(RankExchange inner, String token) {
            this.inner = inner;
            this.token = token;
        }

        @Override
        public byte[][] allGather(byte[] mine) {
            return inner.allGather(mine);
        }

        @Override
        public void fail(Throwable cause) {
            inner.fail(cause);
            leave();
        }

        @Override
        public void close() {
            inner.close();
            leave();
        }

        private synchronized void leave() {
            if (!left) {
                left = true;
                InProcessRendezvous.leave(token);
            }
        }

        @Override
        public String toString() {
            return inner.toString();
        }
    }
}
