package io.flexlink.topo;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;

/**
 * The GPUs of this process's node as one backend sees them, and a fingerprint that keys the tuning
 * cache: two hosts with the same GPU models, PCIe links and NVLink counts share tuned shares.
 * Immutable.
 */
public final class Topology {

    /** Bumped whenever the fingerprint's input encoding changes, so that old cache entries miss. */
    private static final String FINGERPRINT_FORMAT = "flexlink-topo-v1";

    private final String backend;
    private final String libraryVersion;
    private final List<GpuInfo> gpus;
    private final String fingerprint;

    /**
     * @param backend        backend name, e.g. {@code "cuda"} or {@code "host"}
     * @param libraryVersion versions that change what a tuned share means (FlexLink, NCCL, driver...)
     * @param gpus           the GPUs in ordinal order
     */
    public Topology(String backend, String libraryVersion, List<GpuInfo> gpus) {
        this.backend = Objects.requireNonNull(backend, "backend");
        this.libraryVersion = Objects.requireNonNull(libraryVersion, "libraryVersion");
        this.gpus = List.copyOf(gpus);
        for (int i = 0; i < this.gpus.size(); i++) {
            if (this.gpus.get(i).ordinal() != i) {
                throw new IllegalArgumentException("gpus must be in ordinal order 0..n-1; index " + i
                        + " has ordinal " + this.gpus.get(i).ordinal());
            }
        }
        this.fingerprint = computeFingerprint();
    }

    public String backend() {
        return backend;
    }

    public String libraryVersion() {
        return libraryVersion;
    }

    /** The GPUs in ordinal order (unmodifiable). */
    public List<GpuInfo> gpus() {
        return gpus;
    }

    public int gpuCount() {
        return gpus.size();
    }

    public GpuInfo gpu(int ordinal) {
        return gpus.get(ordinal);
    }

    /**
     * Lower-case SHA-256 hex over the backend name, the library version, the GPU count and, per GPU
     * in ordinal order, model, PCIe generation, PCIe width and NVLink count. Host-specific values
     * (host name, PCI bus ids, NUMA nodes, memory) are left out on purpose so that identical nodes
     * of a cluster share one tuning entry.
     */
    public String fingerprint() {
        return fingerprint;
    }

    private String computeFingerprint() {
        StringBuilder sb = new StringBuilder(64 + 48 * gpus.size());
        field(sb, FINGERPRINT_FORMAT);
        field(sb, backend);
        field(sb, libraryVersion);
        field(sb, Integer.toString(gpus.size()));
        for (GpuInfo g : gpus) {
            field(sb, g.model());
            field(sb, Integer.toString(g.pcieGeneration()));
            field(sb, Integer.toString(g.pcieWidth()));
            field(sb, Integer.toString(g.nvlinkCount()));
        }
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(sb.toString().getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required by every Java platform", e);
        }
    }

    // Length-prefixed, so that ("ab","c") and ("a","bc") never hash alike.
    private static void field(StringBuilder sb, String value) {
        sb.append(value.length()).append(':').append(value).append(';');
    }

    /** One line for the INIT log: backend, GPU count, each GPU, and the fingerprint's first 12 hex digits. */
    public String describe() {
        StringBuilder sb = new StringBuilder();
        sb.append("backend=").append(backend).append(" gpus=").append(gpus.size());
        for (GpuInfo g : gpus) {
            sb.append(" [").append(g.describe()).append(']');
        }
        sb.append(" lib=").append(libraryVersion).append(" fp=").append(fingerprint, 0, 12);
        return sb.toString();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Topology t && backend.equals(t.backend) && libraryVersion.equals(t.libraryVersion)
                && gpus.equals(t.gpus);
    }

    @Override
    public int hashCode() {
        return Objects.hash(backend, libraryVersion, gpus);
    }

    @Override
    public String toString() {
        return "Topology[" + describe() + "]";
    }
}
