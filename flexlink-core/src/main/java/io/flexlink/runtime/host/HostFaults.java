package io.flexlink.runtime.host;

/**
 * Test hook of the host backend: called on a stream's worker thread before each operation runs. It may
 * sleep (to shuffle timing between streams), throw (a failed copy or a path failing mid-collective) or
 * return {@link Action#DROP} (a counter write that never arrives). Production code never installs one.
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
}
