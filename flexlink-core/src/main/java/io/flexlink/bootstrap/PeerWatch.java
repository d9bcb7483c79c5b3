package io.flexlink.bootstrap;

import io.flexlink.runtime.RankExchange.PeerLossListener;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The ranks an exchange has lost and who wants to hear of it: each listener hears of each lost rank
 * exactly once, also when it registers after the loss.
 */
final class PeerWatch {
    private static final Logger LOG = LoggerFactory.getLogger(PeerWatch.class);

    private final List<PeerLossListener> listeners = new ArrayList<>();
    private final Map<Integer, String> lost = new LinkedHashMap<>();

    void add(PeerLossListener listener) {
        Map<Integer, String> already;
        synchronized (this) {
            listeners.add(listener);
            already = new LinkedHashMap<>(lost);
        }
        already.forEach((rank, why) -> tell(listener, rank, why));
    }

    /** Records that {@code rank} is gone and tells the listeners (first report of a rank only). */
    void lost(int rank, String why) {
        List<PeerLossListener> now;
        synchronized (this) {
            if (lost.putIfAbsent(rank, why) != null) {
                return;
            }
            now = new ArrayList<>(listeners);
        }
        for (PeerLossListener l : now) {
            tell(l, rank, why);
        }
    }

    /** The ranks lost so far, with why. */
    synchronized Map<Integer, String> lostRanks() {
        return new LinkedHashMap<>(lost);
    }

    private static void tell(PeerLossListener l, int rank, String why) {
        try {
            l.peerLost(rank, why);
        } catch (RuntimeException e) {
            LOG.warn("INIT peer-loss listener failed for rank {}: {}", rank, e.toString());
        }
    }
}
