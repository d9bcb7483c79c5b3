package io.flexlink.runtime.host;

import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.AlternatingScratch;
import io.flexlink.runtime.PinnedMemory;
import io.flexlink.runtime.PrimaryComm;
import io.flexlink.runtime.PrimaryTransport;
import io.flexlink.runtime.RankExchange;
import io.flexlink.sync.Staging;
import io.flexlink.sync.StagingLayout;
import java.nio.charset.StandardCharsets;

/** The host backend's primary path: ring collectives through a staging area in host memory. */
final class HostRingTransport implements PrimaryTransport {
    private final HostBackend backend;
    private final FlexLinkConfig config;

    HostRingTransport(HostBackend backend, FlexLinkConfig config) {
        this.backend = backend;
        this.config = config;
    }

    /** With its staging geometry, which comes from the backend's settings: ranks compare it at creation. */
    @Override
    public String describe() {
        return "host ring (" + config.chunkBytes() + " B x " + config.slots() + " slots)";
    }

    @Override
    public boolean allowsSharedDevices() {
        return true;
    }

    private StagingLayout layout(int size) {
        return new StagingLayout(size, config.slots(), config.chunkBytes());
    }

    @Override
    public PrimaryComm create(RankExchange exchange, int rank, int size, int device) {
        StagingLayout layout = layout(size);
        PinnedMemory mine = rank == 0
                ? backend.createShared(layout.totalBytes(), "primary", exchange.crossProcess()) : null;
        if (mine != null) {
            layout.initialize(mine); // before any rank can see it
        }
        PinnedMemory mem = mine;
        try {
            byte[][] names = exchange.allGather(mine == null ? new byte[0]
                    : mine.name().getBytes(StandardCharsets.UTF_8));
            if (mem == null) {
                mem = backend.openShared(new String(names[0], StandardCharsets.UTF_8), layout.totalBytes());
            }
            // every rank has mapped the area once the exchange returns a second time
            exchange.allGather(new byte[0]);
        } catch (RuntimeException e) {
            if (mem != null) {
                mem.close();
            }
            throw e;
        }
        backend.sharedMapped(mem);
        return new HostRingComm(backend, staging(layout, mem, rank, device), rank, size, device);
    }

    @Override
    public PrimaryComm[] createAll(int[] devices) {
        int n = devices.length;
        StagingLayout layout = layout(n);
        PinnedMemory first = backend.createShared(layout.totalBytes(), "primary");
        layout.initialize(first);
        PrimaryComm[] comms = new PrimaryComm[n];
        int made = 0;
        try {
            for (int r = 0; r < n; r++) {
                PinnedMemory mem = r == 0 ? first : backend.openShared(first.name(), layout.totalBytes());
                try {
                    comms[r] = new HostRingComm(backend, staging(layout, mem, r, devices[r]), r, n, devices[r]);
                } catch (RuntimeException | Error e) {
                    mem.close(); // this rank's reference, not yet owned by a ring
                    throw e;
                }
                made++;
            }
            return comms;
        } catch (RuntimeException | Error e) {
            for (int r = made - 1; r >= 0; r--) {
                try {
                    comms[r].close(); // each ring drops its reference; the last one frees the memory
                } catch (RuntimeException suppressed) {
                    e.addSuppressed(suppressed);
                }
            }
            throw e;
        }
    }

    @Override
    public void groupStart() {
        // ring work is enqueued at once and never blocks the host, so a group needs no deferral
    }

    @Override
    public void groupEnd() {
    }

    private Staging staging(StagingLayout layout, PinnedMemory mem, int rank, int device) {
        return new Staging(layout, mem, rank, new AlternatingScratch(backend, device, false));
    }
}
