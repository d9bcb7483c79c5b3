package io.flexlink.topo;

import java.util.Objects;

/**
 * One GPU as the topology probe saw it. Fields a backend cannot determine are {@code -1}
 * ({@link #UNKNOWN}); strings are never null (an unknown bus id is the empty string).
 *
 * @param ordinal        the backend's device ordinal (CUDA ordinal for the CUDA backend)
 * @param model          the device name, e.g. {@code "NVIDIA H200"}
 * @param pciBusId       canonical lower-case PCI address {@code dddd:bb:dd.f}, or {@code ""}
 * @param pcieGeneration PCIe generation of the link (1..6), or -1
 * @param pcieWidth      PCIe lanes of the link (1..32), or -1
 * @param numaNode       NUMA node the device hangs off, or -1
 * @param nvlinkCount    number of active NVLinks, or -1
 * @param memoryBytes    device memory in bytes, or -1
 */
public record GpuInfo(int ordinal, String model, String pciBusId, int pcieGeneration, int pcieWidth,
                      int numaNode, int nvlinkCount, long memoryBytes) {

    /** The value of an int or long field the probe could not determine. */
    public static final int UNKNOWN = -1;

    public GpuInfo {
        if (ordinal < 0) {
            throw new IllegalArgumentException("ordinal must be >= 0: " + ordinal);
        }
        Objects.requireNonNull(model, "model");
        Objects.requireNonNull(pciBusId, "pciBusId");
        requireKnownOrUnknown("pcieGeneration", pcieGeneration);
        requireKnownOrUnknown("pcieWidth", pcieWidth);
        requireKnownOrUnknown("numaNode", numaNode);
        requireKnownOrUnknown("nvlinkCount", nvlinkCount);
        if (memoryBytes < UNKNOWN) {
            throw new IllegalArgumentException("memoryBytes must be >= -1: " + memoryBytes);
        }
    }

    private static void requireKnownOrUnknown(String name, int value) {
        if (value < UNKNOWN) {
            throw new IllegalArgumentException(name + " must be >= -1: " + value);
        }
    }

    /** True when at least one NVLink is active (false when none or unknown). */
    public boolean hasNvlink() {
        return nvlinkCount > 0;
    }

    /** Short human-readable form for logs, e.g. {@code 0:NVIDIA H200@0000:19:00.0 Gen5x16 numa0 nvl18 141GiB}. */
    public String describe() {
        StringBuilder sb = new StringBuilder();
        sb.append(ordinal).append(':').append(model);
        if (!pciBusId.isEmpty()) {
            sb.append('@').append(pciBusId);
        }
        sb.append(" Gen").append(orQ(pcieGeneration)).append('x').append(orQ(pcieWidth));
        sb.append(" numa").append(orQ(numaNode));
        sb.append(" nvl").append(orQ(nvlinkCount));
        sb.append(' ').append(memoryBytes < 0 ? "?" : Long.toString(memoryBytes >> 30)).append("GiB");
        return sb.toString();
    }

    private static String orQ(int v) {
        return v < 0 ? "?" : Integer.toString(v);
    }
}
