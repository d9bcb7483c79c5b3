package io.flexlink.hier;

import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.LinkPacing;
import io.flexlink.runtime.PrimaryTransport;
import io.flexlink.runtime.RankDevices;
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
        NetChannel net = new NetChannel(backend, config.slots(), chunk, pacer, "flexlink-rail-r" + rank, "rail",
                "the next node", "the previous node", onFailure);
        net.connect(links.out(), links.in());
        return new TcpRail(backend, rank, n, device, net);
    }

    /**
     * Makes a rank's links for Send and Recv between nodes ({@link PeerNet}); every rank of the job calls this
     * together over the job's exchange. On the host backend: TCP links made when a pair first transfers. Elsewhere
     * a flat communicator of the primary transport over every rank, which must be made now (NCCL's creation needs
     * every rank, and a transfer must involve its two ranks only); where two ranks of a node share a device that
     * the transport refuses to share (NCCL), there is none, and {@code null} says so on every rank alike.
     */
    static PeerNet peers(Backend backend, FlexLinkConfig config, RankExchange job, int rank, int n, int device,
                         io.flexlink.bootstrap.NodeLayout layout, InetAddress address, Runnable onFailure) {
        if (backend.name().equals("host")) {
            return TcpPeers.create(backend, config, job, rank, n, address, onFailure);
        }
        PrimaryTransport t = backend.primaryTransport();
        RankDevices devices = RankDevices.exchange(job, backend, device);
        if (!t.allowsSharedDevices()) {
            java.util.Set<String> seen = new java.util.HashSet<>();
            for (int r = 0; r < n; r++) {
                // a device key names a device of its node
                if (!seen.add(layout.nodeOf(r) + "/" + devices.key(r))) {
                    return null;
                }
            }
        }
        return new PrimaryPeers(t.create(job, rank, n, device), t);
    }
}
