package io.flexlink;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * {@link FlexLink#initRank} inside a group, per thread: the call returns a {@link DeferredCommunicator} and
 * the outermost {@link FlexLink#groupEnd} creates every deferred rank at once, one thread each (they meet
 * each other at their rendezvous, so one thread cannot make them one after another), and waits for all.
 * The first failure is what groupEnd throws; the ranks that were made stay usable.
 */
final class GroupedInit {
    private static final ThreadLocal<List<Job>> PENDING = ThreadLocal.withInitial(ArrayList::new);

    private record Job(DeferredCommunicator comm, Supplier<Communicator> make) {
    }

    private GroupedInit() {
    }

    static Communicator defer(int nranks, int rank, int device, Supplier<Communicator> make) {
        DeferredCommunicator c = new DeferredCommunicator(rank, nranks, device);
        PENDING.get().add(new Job(c, make));
        return c;
    }

    /** Creates this thread's deferred ranks; returns {@code earlier}, else the first failure of theirs. */
    static Throwable runPending(Throwable earlier) {
        List<Job> jobs = PENDING.get();
        if (jobs.isEmpty()) {
            return earlier;
        }
        List<Job> mine = new ArrayList<>(jobs);
        jobs.clear();
        Throwable[] failures = new Throwable[mine.size()];
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < mine.size(); i++) {
            int k = i;
            Job j = mine.get(i);
            Thread t = new Thread(() -> failures[k] = run(j), "flexlink-group-init-r" + j.comm.rank());
            t.setDaemon(true);
            t.start();
            threads.add(t);
        }
        boolean interrupted = false;
        for (Thread t : threads) {
            while (true) {
                try {
                    t.join(); // each creation is bounded by its flexlink.initTimeout
                    break;
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        Throwable first = earlier;
        for (Throwable f : failures) {
            if (f == null) {
                continue;
            }
            if (first == null) {
                first = f;
            } else if (first != f) {
                first.addSuppressed(f);
            }
        }
        return first;
    }

    private static Throwable run(Job j) {
        try {
            j.comm.made(j.make.get());
            return null;
        } catch (FlexLinkException e) {
            j.comm.failed(e);
            return e;
        } catch (RuntimeException e) {
            FlexLinkException f = new FlexLinkException(Result.INTERNAL_ERROR, "rank " + j.comm.rank()
                    + ": creation at groupEnd failed: " + e, e);
            j.comm.failed(f);
            return f;
        } catch (Error e) {
            j.comm.failed(new FlexLinkException(Result.INTERNAL_ERROR, "rank " + j.comm.rank() + ": " + e, e));
            return e;
        }
    }
}
