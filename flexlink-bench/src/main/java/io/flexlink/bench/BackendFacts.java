package io.flexlink.bench;

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
    void write(JsonWriter w) {
        w.key("topology").beginObject()
                .field("backend", name)
                .field("description", description)
                .field("device_count", deviceCount)
                .field("primary_transport", primaryTransport)
                .field("fingerprint", fingerprint)
                .field("library_versions", topology == null ? null : topology.libraryVersion());
        w.key("gpus");
        if (topology == null) {
            w.nullValue(); // not probed by this backend
        } else {
            w.beginArray();
            for (GpuInfo g : topology.gpus()) {
                w.beginObject()
                        .field("ordinal", g.ordinal())
                        .field("model", g.model())
                        .field("pci_bus_id", g.pciBusId())
                        .field("pcie_generation", g.pcieGeneration())
                        .field("pcie_width", g.pcieWidth())
                        .field("numa_node", g.numaNode())
                        .field("nvlink_count", g.nvlinkCount())
                        .field("memory_bytes", g.memoryBytes())
                        .endObject();
            }
            w.endArray();
        }
        w.endObject();
    }
}
