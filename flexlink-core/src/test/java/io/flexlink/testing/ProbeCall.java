package io.flexlink.testing;

import io.flexlink.Collective;
import io.flexlink.Communicator;
import io.flexlink.config.ByteSizes;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.Backend;

/**
 * The call a host-cost probe makes, from its first four arguments: {@code collective bytesPerRank ranks chunk}
 * ({@code StreamOpCount}, {@code StreamOpTrace}, {@code SplitHostCost}). The ranks share device 0 and split as
 * {@link GroupCalls#probeConfig} says.
 */
public record ProbeCall(Collective collective, long bytes, int ranks, String chunk) {
    public static ProbeCall parse(String[] args) {
        return new ProbeCall(Collective.valueOf(args[0]), ByteSizes.parse(args[1]), Integer.parseInt(args[2]),
                args[3]);
    }

    /** The probes' configuration for this call ({@link GroupCalls#probeConfig}). */
    public FlexLinkConfig.Builder config() {
        return GroupCalls.probeConfig(ranks, chunk);
    }

    /** The ranks' communicators on {@code backend}, all on device 0. */
    public Communicator[] communicators(Backend backend, FlexLinkConfig config) {
        return io.flexlink.FlexLink.initAll(backend, config, new int[ranks]);
    }

    /** The call on {@code comms}, its buffers and streams from {@code memory}; the last rank roots a rooted one. */
    public GroupCalls group(Backend memory, Communicator[] comms) {
        return new GroupCalls(memory, comms, collective, bytes / 4, ranks - 1);
    }
}
