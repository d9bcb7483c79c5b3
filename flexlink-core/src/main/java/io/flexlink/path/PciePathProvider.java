package io.flexlink.path;

import io.flexlink.runtime.AlternatingScratch;
import io.flexlink.runtime.MemoryPlacement;
import io.flexlink.runtime.PinnedMemory;
import io.flexlink.sync.Staging;
import io.flexlink.sync.StagingLayout;

/**
 * The PCIe path: every byte goes device → pinned host slot → device on the copy engines, through a
 * staging area that rank 0 creates and every rank maps ({@link Staging}). Runs wherever the ranks can map
 * one host memory area, on every backend.
 */
public final class PciePathProvider implements PathProvider {
    @Override
    public String name() {
        return "pcie";
    }

    @Override
    public String unavailableReason(PathContext context) {
        return null;
    }

    @Override
    public Path create(PathContext context) {
        int n = context.size();
        StagingLayout layout = StagingGeometry.layout(context.config(), n, context.budget());
        // each producer's slots near its own GPU (NUMA), the handshake words near rank 0's
        long[] starts = new long[n + 1];
        String[] near = new String[n + 1];
        near[0] = context.devices().key(0);
        for (int p = 0; p < n; p++) {
            starts[p + 1] = layout.slotOffset(p, 0);
            near[p + 1] = context.devices().key(p);
        }
        PinnedMemory memory = context.shared().create("pcie", layout.totalBytes(), new MemoryPlacement(starts, near),
                layout::initialize);
        boolean local = StagedPath.localStream(context);
        Staging staging = new Staging(layout, memory, context.rank(),
                new AlternatingScratch(context.backend(), context.device(), local));
        return new StagedPath("pcie", context.backend(), staging, context.rank(), n, context.device(), local,
                context.budget());
    }
}
