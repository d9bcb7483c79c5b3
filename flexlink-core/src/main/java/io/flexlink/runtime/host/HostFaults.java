package io.flexlink.runtime.host;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Fault injection into the host backend, given to its constructor
 * ({@link HostBackend#HostBackend(io.flexlink.config.FlexLinkConfig, HostFaults)}): called on a stream's
 * worker thread before each operation runs. It may sleep (to shuffle timing between streams), block (a
 * rank that stops answering), throw (a failed copy or a path failing mid-collective: the stream fails with
 * the exception, a {@code FlexLinkException}'s result or INTERNAL_ERROR) or return {@link Action#DROP} (a
 * counter write that never arrives). A backend made without one runs every operation as it is, with no
 * hook in the way. Event records are not passed through it.
 */
@FunctionalInterface
public interface HostFaults {
    /** Kinds of stream operations. */
    enum Op { COPY, WAIT, WRITE, REDUCE, RECORD, WAIT_EVENT }

    /** What to do with the operation. */
    enum Action { RUN, DROP }

    /**
     * @param streamLabel the stream's label ({@code pcie.send.r1}, {@code user.r0}, ...)
     * @param op the operation about to run
     */
    Action before(String streamLabel, Op op) throws Exception;

    /**
     * Like {@link #before(String, Op)}, knowing the stream's device, which tells apart the same rank of two
     * communicators on different devices; the backend calls this one.
     */
    default Action before(int device, String streamLabel, Op op) throws Exception {
        return before(streamLabel, op);
    }

    /** What to do with the {@code nth} (from 1) operation a {@link #targeting} hook matched. */
    @FunctionalInterface
    interface Rule {
        Action apply(long nth) throws Exception;
    }

    /**
     * A hook for the operations of kind {@code op} (null: any kind) on the streams of {@code device}
     * whose label starts with {@code labelPrefix}; every other operation runs.
     */
    static HostFaults targeting(int device, String labelPrefix, Op op, Rule rule) {
        AtomicLong matched = new AtomicLong();
        return new HostFaults() {
            @Override
            public Action before(String streamLabel, Op kind) {
                return Action.RUN;
            }

            @Override
            public Action before(int d, String streamLabel, Op kind) throws Exception {
                if (d != device || !streamLabel.startsWith(labelPrefix) || (op != null && kind != op)) {
                    return Action.RUN;
                }
                return rule.apply(matched.incrementAndGet());
            }
        };
    }
}
