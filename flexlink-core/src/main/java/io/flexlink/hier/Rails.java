package io.flexlink.hier;

import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.LinkPacing;
import io.flexlink.runtime.PrimaryTransport;
import io.flexlink.runtime.RankExchange;
import io.flexlink.runtime.host.Emulation;
import java.net.InetAddress;

/**
 * Makes a rank's rail: on the host backend a {@link TcpRail} (its primary transport shares memory, which
 * nodes do not), elsewhere the backend's primary transport (NCCL), which crosses nodes by itself. Every
 * rank of the rail calls this together.
 */
final class Rails {
    /** Largest rail chunk: the slots are direct buffers, whose capacity is an int. */
    static final long MAX_CHUNK = 64L << 20;

    private Rails() {
    }

    static RailComm create(Backend backend, FlexLinkConfig config, RankExchange exchange, int rank, int n, int device,
                           InetAddress address, Runnable onFailure) {
        if (!backend.name().equals("host")) {
            PrimaryTransport t = backend.primaryTransport();
            return new PrimaryRail(t.create(exchange, rank, n, device), t.describe());
        }
        RailConnector.Links links = RailConnector.connect(exchange, rank, n, address, config.initTimeout());
        Emulation e = Emulation.parse(config.emulate());
        RailPacer pacer = new RailPacer(e.bytesPerSecond(Emulation.RAIL), e.latencyNanos(Emulation.RAIL),
                LinkPacing.Clock.SYSTEM);
        int chunk = (int) Math.max(4096, Math.min(MAX_CHUNK, config.chunkBytes()) / 256 * 256);
        NetChannel net = new NetChannel(backend, config.slots(), chunk, links.out(), links.in(), pacer,
                "flexlink-rail-r" + rank, onFailure);
        return new TcpRail(backend, rank, n, device, net);
    }
}
