package io.flexlink.bench;

import com.google.gson.JsonArray;
import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import io.flexlink.runtime.Backend;
import io.flexlink.topo.GpuInfo;
import io.flexlink.topo.Topology;

/**
 * What the opened backend says about the machine, for the header and the JSON: its primary transport
 * with its version ({@code NCCL 2.28.3}, {@code host ring}), its tuning-cache fingerprint and, where it
 * probes them (the CUDA backend's {@link Topology}), the GPUs — model, PCI address, PCIe link, NVLinks,
 * memory — and the library versions that go into the fingerprint (FlexLink, NCCL, the CUDA driver API).
 * The CUDA runtime's own version is not exposed by the backends, so it is not recorded.
 */
final class BackendFacts {
    final String name;
    final String description;
    final int deviceCount;
    final String primaryTransport;
    final String fingerprint;
    /** The GPUs and library versions, or null where the backend does not probe them (host). */
    final Topology topology;

    BackendFacts(String name, String description, int deviceCount, String primaryTransport, String fingerprint,
                 Topology topology) {
        this.name = name;
        this.description = description;
        this.deviceCount = deviceCount;
        this.primaryTransport = primaryTransport;
        this.fingerprint = fingerprint;
        this.topology = topology;
    }

    static BackendFacts of(Backend backend) {
        return new BackendFacts(backend.name(), backend.toString(), backend.deviceCount(),
                backend.primaryTransport().describe(), backend.fingerprint(), topologyOf(backend));
    }

    private static Topology topologyOf(Backend backend) {
        try {
            if (backend instanceof io.flexlink.cuda.CudaBackend) {
                return ((io.flexlink.cuda.CudaBackend) backend).topology();
            }
        } catch (LinkageError e) {
            // flexlink-native's classes do not load here: then the backend is not CUDA either
        }
        return null;
    }

    /** The GPU behind {@code device}, or null when unknown. */
    GpuInfo gpu(int device) {
        return topology != null && device >= 0 && device < topology.gpuCount() ? topology.gpu(device) : null;
    }

    /** What the "Using devices" line shows in brackets and after them: PCI address and model, as nccl-tests. */
    String deviceLabel(int device) {
        GpuInfo g = gpu(device);
        if (g == null) {
            return "[" + name + "] " + description;
        }
        return "[" + (g.pciBusId().isEmpty() ? name : g.pciBusId()) + "] " + g.model();
    }

    /** One header line: the primary transport and the topology as the backend describes it. */
    String headerLine() {
        return "# Topology: " + (topology != null ? topology.describe() : fingerprint) + "; primary transport "
                + primaryTransport;
    }

    /** The {@code topology} object of the JSON. */
    JsonObject json() {
        JsonObject t = new JsonObject();
        t.addProperty("backend", name);
        t.addProperty("description", description);
        t.addProperty("device_count", deviceCount);
        t.addProperty("primary_transport", primaryTransport);
        t.addProperty("fingerprint", fingerprint);
        t.add("library_versions", JsonReport.string(topology == null ? null : topology.libraryVersion()));
        if (topology == null) {
            t.add("gpus", JsonNull.INSTANCE); // not probed by this backend
            return t;
        }
        JsonArray gpus = new JsonArray();
        for (GpuInfo g : topology.gpus()) {
            JsonObject o = new JsonObject();
            o.addProperty("ordinal", g.ordinal());
            o.addProperty("model", g.model());
            o.addProperty("pci_bus_id", g.pciBusId());
            o.addProperty("pcie_generation", g.pcieGeneration());
            o.addProperty("pcie_width", g.pcieWidth());
            o.addProperty("numa_node", g.numaNode());
            o.addProperty("nvlink_count", g.nvlinkCount());
            o.addProperty("memory_bytes", g.memoryBytes());
            gpus.add(o);
        }
        t.add("gpus", gpus);
        return t;
    }

    /**
     * nccl-tests' {@code nccl-library=} code of the primary transport's NCCL (major x 10000 + minor x 100 +
     * patch), or {@code none} where the primary transport is not NCCL (the host backend).
     */
    String ncclLibraryCode() {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("NCCL (\\d+)\\.(\\d+)\\.(\\d+)").matcher(primaryTransport);
        if (!m.find()) {
            return "none";
        }
        return String.valueOf(Integer.parseInt(m.group(1)) * 10000 + Integer.parseInt(m.group(2)) * 100
                + Integer.parseInt(m.group(3)));
    }
}
