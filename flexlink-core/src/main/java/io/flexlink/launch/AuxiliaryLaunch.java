package io.flexlink.launch;

import io.flexlink.balance.PathCounters;
import io.flexlink.path.CollectiveCall;
import io.flexlink.path.Path;
import io.flexlink.plan.CallPlan;
import io.flexlink.runtime.RuntimeEvent;
import io.flexlink.runtime.RuntimeStream;

/**
 * The auxiliary part of one call: each path's range, its streams forked off the caller's stream and each
 * stream's end recorded for the join, the bytes counted. The one loop that the calling thread
 * ({@link Launcher#launchAuxiliary}) and the enqueue thread ({@link EnqueueWorker}) both run.
 */
final class AuxiliaryLaunch {
    /** Where path {@code path}'s stream {@code stream} records that its range of the call is done. */
    interface Joins {
        RuntimeEvent at(int path, int stream);
    }

    private AuxiliaryLaunch() {
    }

    static void enqueue(Path[] aux, PathCounters counters, CallPlan p, RuntimeEvent fork, Joins joins) {
        CollectiveCall c = p.call;
        long offset = p.lengths[0];
        for (int i = 0; i < aux.length; i++) {
            long n = p.lengths[i + 1];
            if (n == 0) {
                continue;
            }
            RuntimeStream[] ps = aux[i].streams();
            for (RuntimeStream s : ps) {
                s.waitEvent(fork);
            }
            aux[i].enqueue(c, offset, n);
            for (int k = 0; k < ps.length; k++) {
                ps[k].record(joins.at(i, k));
            }
            offset += n;
            counters.add(i + 1, n * c.type.size());
        }
    }
}
