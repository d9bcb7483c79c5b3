package io.flexlink.bootstrap;

import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The connections that rank 0's rendezvous refused: logged, and the first few kept for rank 0's timeout
 * error. Bounded, since anyone who can reach the port can be refused as often as they like.
 */
final class Refusals {
    private static final Logger LOG = LoggerFactory.getLogger(RendezvousServer.class);
    /** Refusals kept (and logged at WARN); later ones are only counted (and logged at DEBUG). */
    static final int MAX_KEPT = 16;

    private final String where;
    private final List<String> kept = new ArrayList<>();
    private int more;

    Refusals(String where) {
        this.where = where;
    }

    /** Notes that a connection from {@code from} ({@code rank}: -1 when it never said one) was refused. */
    void note(String from, int rank, String why) {
        String who = rank < 0 ? "a connection from " + from : "a peer from " + from + " claiming rank " + rank;
        boolean keep;
        synchronized (this) {
            keep = kept.size() < MAX_KEPT;
            if (keep) {
                kept.add((rank < 0 ? "" : "rank " + rank + " ") + "from " + from + ": " + why);
            } else {
                more++;
            }
        }
        if (keep) {
            LOG.warn("INIT rendezvous {}: refused {}: {}", where, who, why);
        } else {
            LOG.debug("INIT rendezvous {}: refused {}: {}", where, who, why);
        }
    }

    /** {@code "; refused: [...]"} for an error message, or nothing when none was refused. */
    synchronized String summary() {
        return kept.isEmpty() ? "" : "; refused: " + kept + (more == 0 ? "" : " and " + more + " more");
    }
}
