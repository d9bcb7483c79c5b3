package io.flexlink.comm;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntConsumer;
import java.util.function.ObjIntConsumer;

/** The threads of {@code initAll}: one per rank, all waited for, their failures kept in the order they happened. */
final class RankThreads {
    private RankThreads() {
    }

    /**
     * Runs {@code task} for every rank on a thread of its own ({@code flexlink-init-r<rank>}), then
     * {@code after} for that rank (on the caller's thread for a rank whose thread could not start), after
     * {@code failed} for a rank whose task threw or never ran (so that it can tell the others at once), and
     * waits for every thread even when interrupted (a failed creation frees what the threads made only
     * once they are done with it). Returns the failures, first one first; empty when every rank succeeded.
     */
    static List<Throwable> run(int n, IntConsumer task, ObjIntConsumer<Throwable> failed, IntConsumer after) {
        List<Throwable> failures = new ArrayList<>();
        Thread[] threads = new Thread[n];
        for (int r = 0; r < n; r++) {
            int rank = r;
            try {
                threads[r] = new Thread(() -> {
                    try {
                        task.accept(rank);
                    } catch (Throwable t) {
                        synchronized (failures) {
                            failures.add(t);
                        }
                        failed.accept(t, rank);
                    } finally {
                        after.accept(rank);
                    }
                }, "flexlink-init-r" + r);
                threads[r].start();
            } catch (Throwable t) { // no thread for this rank nor the next ones
                threads[r] = null;
                synchronized (failures) {
                    failures.add(t);
                }
                for (int k = r; k < n; k++) {
                    failed.accept(t, k);
                    after.accept(k);
                }
                break;
            }
        }
        boolean interrupted = false;
        for (Thread t : threads) {
            while (t != null) {
                try {
                    t.join();
                    break;
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        }
        synchronized (failures) {
            if (interrupted) {
                Thread.currentThread().interrupt();
                failures.add(new FlexLinkException(Result.SYSTEM_ERROR, "communicator creation interrupted"));
            }
            return new ArrayList<>(failures);
        }
    }
}
