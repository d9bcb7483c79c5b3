package io.flexlink.testing;

import io.flexlink.runtime.host.HostFaults;

/**
 * A fault hook for a host backend ({@code new HostBackend(config, faults)}) that a test arms and disarms
 * while the backend lives: every operation runs unless a hook is {@link #set}. The hook in place when an
 * operation is about to run decides for it.
 */
public final class SwitchableFaults implements HostFaults {
    private volatile HostFaults current;

    /** Arms {@code hook} (null: every operation runs). */
    public void set(HostFaults hook) {
        current = hook;
    }

    @Override
    public Action before(String streamLabel, Op op) throws Exception {
        HostFaults h = current;
        return h == null ? Action.RUN : h.before(streamLabel, op);
    }

    @Override
    public Action before(int device, String streamLabel, Op op) throws Exception {
        HostFaults h = current;
        return h == null ? Action.RUN : h.before(device, streamLabel, op);
    }
}
