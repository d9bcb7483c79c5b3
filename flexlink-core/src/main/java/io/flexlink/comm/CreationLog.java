package io.flexlink.comm;

import io.flexlink.path.Path;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.PrimaryComm;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the creation of one rank has made so far, so that a creation that fails partway frees it: each
 * resource is registered as it is made (streams, events and device memory by {@link #tracking the
 * backend}, the rest by the factory), a resource handed to an owner (staging memory to its path, every
 * path to the communicator) is replaced by that owner, and {@link #rollback} closes what is registered
 * in reverse order, children before parents. {@link #commit} hands everything to the communicator.
 * Thread-safe: a path provider may make resources on threads of its own.
 */
final class CreationLog {
    private static final Logger LOG = LoggerFactory.getLogger(CreationLog.class);

    private final String who;
    private final List<Entry> made = new ArrayList<>();
    private volatile boolean finished;

    /** {@code closer} frees {@code what}. */
    private record Entry(Object what, AutoCloseable closer) {
    }

    /** @param who the rank, for the log ({@code rank 1/3}) */
    CreationLog(String who) {
        this.who = who;
    }

    /** A backend that registers here the streams, events and device memory it makes until commit or rollback. */
    Backend tracking(Backend backend) {
        return new CreationBackend(backend, this);
    }

    /** True while creation goes on (after commit or rollback nothing is registered any more). */
    boolean open() {
        return !finished;
    }

    /** Registers {@code thing}, freed by its own close; returns it. */
    <T extends AutoCloseable> T add(T thing) {
        return add(thing, thing);
    }

    /** Registers {@code thing}, freed by {@code closer}; returns it. After commit or rollback, only returns it. */
    synchronized <T> T add(T thing, AutoCloseable closer) {
        if (!finished) {
            made.add(new Entry(thing, closer));
        }
        return thing;
    }

    /** Where the next registration goes; pass it to {@link #owned}. */
    synchronized int mark() {
        return made.size();
    }

    /** {@code owner}, freed by {@code closer}, now frees everything registered since {@code mark}; returns it. */
    synchronized <T> T owned(int mark, T owner, AutoCloseable closer) {
        if (!finished) {
            made.subList(mark, made.size()).clear();
            made.add(new Entry(owner, closer));
        }
        return owner;
    }

    /** A path made by creation: on rollback it tells the peers (abort word, counters released), then frees. */
    static AutoCloseable abortThenClose(Path p) {
        return () -> {
            try {
                p.abort();
            } finally {
                p.close();
            }
        };
    }

    /** A primary communicator (NCCL: {@code ncclCommAbort} never waits for peers that are gone), then frees. */
    static AutoCloseable abortThenClose(PrimaryComm c) {
        return () -> {
            try {
                c.abort();
            } finally {
                c.close();
            }
        };
    }

    /** Creation succeeded: the communicator owns everything; nothing is registered from now on. */
    synchronized void commit() {
        finished = true;
        made.clear();
    }

    /**
     * Creation failed with {@code cause}: closes everything registered, last made first; a failure to close
     * one thing is added to {@code cause} as suppressed and the rest is still closed. Returns {@code cause};
     * idempotent, and a no-op after {@link #commit}.
     */
    <E extends Throwable> E rollback(E cause) {
        List<Entry> undo;
        synchronized (this) {
            finished = true;
            undo = new ArrayList<>(made);
            made.clear();
        }
        if (!undo.isEmpty()) {
            LOG.debug("INIT {}: creation failed ({}); closing the {} things it had made", who, cause.toString(),
                    undo.size());
        }
        for (int i = undo.size() - 1; i >= 0; i--) {
            try {
                undo.get(i).closer().close();
            } catch (Throwable t) {
                if (t != cause) {
                    cause.addSuppressed(t);
                }
                LOG.debug("INIT {}: closing {} after a failed creation: {}", who, undo.get(i).what(), t.toString());
            }
        }
        return cause;
    }
}
