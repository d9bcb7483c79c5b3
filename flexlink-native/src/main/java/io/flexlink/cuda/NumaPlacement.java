package io.flexlink.cuda;

import io.flexlink.runtime.MemoryPlacement;
import io.flexlink.topo.GpuInfo;
import io.flexlink.topo.Topology;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Decides where pinned staging memory goes ({@code flexlink.numa}) and binds it. A region serving a GPU is
 * bound to that GPU's NUMA node, before the memory is pinned, so that its copies never cross the
 * socket interconnect. Only worth it where the host has several nodes; {@code force} binds even on one
 * node (to node 0 where the node is unknown), which exercises the same allocation path.
 */
final class NumaPlacement {
    private static final Logger LOG = LoggerFactory.getLogger(NumaPlacement.class);
    static final Path NODES = Path.of("/sys/devices/system/node");
    /** mbind through the javacpp-built helper; a lambda, so that its class loads only when called. */
    static final Binder NATIVE = (address, len, node) -> NumaNative.flexlink_numa_bind(address, len, node);
    private static final AtomicBoolean UNAVAILABLE_LOGGED = new AtomicBoolean();
    /** A canonical PCI address ({@code dddd:bb:dd.f}), the only key looked up in sysfs. */
    private static final Pattern BUS_ID = Pattern.compile("[0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}\\.[0-9a-f]");

    /** Binds {@code [address, address + len)} to {@code node}: 0 or an errno. */
    @FunctionalInterface
    interface Binder {
        int bind(long address, long len, int node);
    }

    private NumaPlacement() {
    }

    /** NUMA nodes of this host with memory ({@code nodeN} entries), at least 1. */
    static int hostNodes(Path nodes) {
        try (Stream<Path> s = Files.list(nodes)) {
            return (int) Math.max(1, s.filter(p -> p.getFileName().toString().matches("node[0-9]+")).count());
        } catch (IOException | RuntimeException e) {
            return 1;
        }
    }

    /** True when staging should be bound for {@code mode} ({@code auto|off|force}). */
    static boolean wanted(String mode, int hostNodes) {
        return mode.equals("force") || (mode.equals("auto") && hostNodes > 1);
    }

    /**
     * The node of the device of {@code key} (its PCI bus id: {@link CudaBackend#deviceKey}), or 0 under
     * {@code force} when unknown, or -1. A GPU this process does not see (another process's, under
     * {@code CUDA_VISIBLE_DEVICES}) is looked up in {@code sysfsPciDevices} by its bus id.
     */
    static int nodeOf(Topology topology, Path sysfsPciDevices, String key, boolean force) {
        int node = GpuInfo.UNKNOWN;
        for (GpuInfo g : topology.gpus()) {
            if (g.pciBusId().equals(key)) {
                node = g.numaNode();
            }
        }
        if (node < 0 && BUS_ID.matcher(key).matches()) {
            node = NvmlTopology.numaNode(sysfsPciDevices, key);
        }
        return node >= 0 ? node : force ? 0 : -1;
    }

    /**
     * Binds each region of {@code placement} in the mapping at {@code address} to its device's node; regions
     * must start on page boundaries (staging slots are 4096-aligned). Failures are logged, never thrown:
     * placement only makes copies faster.
     */
    static int bind(long address, long bytes, MemoryPlacement placement, Topology topology, boolean force) {
        return bind(address, bytes, placement, topology, force, NATIVE);
    }

    /** {@link #bind} through {@code binder} (tests stand in for the native helper). */
    static int bind(long address, long bytes, MemoryPlacement placement, Topology topology, boolean force,
                    Binder binder) {
        int bound = 0;
        for (int i = 0; i < placement.regions(); i++) {
            long start = placement.start(i);
            long len = placement.end(i, bytes) - start;
            int node = nodeOf(topology, NvmlTopology.SYSFS_PCI_DEVICES, placement.device(i), force);
            if (len <= 0 || node < 0) {
                continue;
            }
            int rc;
            try {
                rc = binder.bind(address + start, len, node);
            } catch (LinkageError | RuntimeException e) {
                // the helper library could not be loaded (or linked): the staging stays where it is
                if (UNAVAILABLE_LOGGED.compareAndSet(false, true)) {
                    LOG.warn("INIT numa: cannot bind staging memory to NUMA nodes, it stays unbound: {}", e.toString());
                }
                return bound;
            }
            if (rc == 0) {
                bound++;
            } else {
                LOG.debug("INIT numa: binding {} B at +{} to node {} failed (errno {})", len, start, node, rc);
            }
        }
        return bound;
    }
}
