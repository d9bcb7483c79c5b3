package io.flexlink.cuda;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.topo.GpuInfo;
import io.flexlink.topo.Topology;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.bytedeco.cuda.global.cudart;
import org.bytedeco.cuda.global.nvml;
import org.bytedeco.cuda.nvml.nvmlDevice_st;
import org.bytedeco.cuda.nvml.nvmlMemory_t;
import org.bytedeco.cuda.nvml.nvmlPciInfo_t;
import org.bytedeco.javacpp.SizeTPointer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Builds the CUDA backend's {@link Topology} from NVML, falling back to what cudart knows (name,
 * bus id, memory; PCIe and NVLink unknown) where NVML is missing or fails. NVML enumerates every GPU
 * of the node in its own order, ignoring {@code CUDA_VISIBLE_DEVICES}; devices are matched to CUDA
 * ordinals by PCI bus id.
 */
public final class NvmlTopology {
    private static final Logger LOG = LoggerFactory.getLogger(NvmlTopology.class);

    /** Backend name that goes into the fingerprint. */
    public static final String BACKEND = "cuda";

    static final Path SYSFS_PCI_DEVICES = Path.of("/sys/bus/pci/devices");

    /** What NVML reports for one GPU. */
    private record NvmlGpu(String name, int pcieGeneration, int pcieWidth, int nvlinkCount, long memoryBytes) {
    }

    private NvmlTopology() {
    }

    /**
     * Probes the visible CUDA devices.
     *
     * @param libraryVersion versions that go into the fingerprint (FlexLink, NCCL, driver...)
     * @throws FlexLinkException when CUDA is unavailable
     */
    public static Topology detect(String libraryVersion) {
        if (!CudaLibraries.available()) {
            throw new FlexLinkException(Result.SYSTEM_ERROR, "CUDA unavailable: " + CudaLibraries.unavailableReason());
        }
        Map<String, NvmlGpu> byBus = CudaLibraries.nvmlAvailable() ? queryNvml() : Map.of();
        if (byBus.isEmpty()) {
            LOG.info("NVML gave no devices ({}); PCIe and NVLink fields stay unknown",
                    CudaLibraries.nvmlAvailable() ? "query failed" : CudaLibraries.nvmlUnavailableReason());
        }
        cudart.cuInit(0); // the runtime already initialized the driver; cuInit is idempotent
        int n = CudaLibraries.deviceCount();
        List<GpuInfo> gpus = new ArrayList<>(n);
        for (int ordinal = 0; ordinal < n; ordinal++) {
            String bus = cudaBusId(ordinal);
            int numa = numaNode(SYSFS_PCI_DEVICES, bus);
            NvmlGpu g = bus.isEmpty() ? null : byBus.get(bus);
            if (g != null) {
                gpus.add(new GpuInfo(ordinal, g.name(), bus, g.pcieGeneration(), g.pcieWidth(), numa,
                        g.nvlinkCount(), g.memoryBytes()));
            } else {
                if (!byBus.isEmpty()) {
                    LOG.info("CUDA device {} ({}) not found in NVML; using cudart's view", ordinal, bus);
                }
                gpus.add(new GpuInfo(ordinal, cudaName(ordinal), bus, GpuInfo.UNKNOWN, GpuInfo.UNKNOWN, numa,
                        GpuInfo.UNKNOWN, cudaMemory(ordinal)));
            }
        }
        Topology t = new Topology(BACKEND, libraryVersion, gpus);
        LOG.info("INIT topology {}", t.describe());
        return t;
    }

    // ---- NVML ----

    private static Map<String, NvmlGpu> queryNvml() {
        int rc = nvml.nvmlInit_v2();
        if (rc != nvml.NVML_SUCCESS) {
            LOG.info("nvmlInit_v2 failed: {}", nvmlError(rc));
            return Map.of();
        }
        try {
            int[] count = new int[1];
            rc = nvml.nvmlDeviceGetCount_v2(count);
            if (rc != nvml.NVML_SUCCESS) {
                LOG.info("nvmlDeviceGetCount_v2 failed: {}", nvmlError(rc));
                return Map.of();
            }
            Map<String, NvmlGpu> out = new HashMap<>();
            for (int i = 0; i < count[0]; i++) {
                nvmlDevice_st dev = new nvmlDevice_st();
                rc = nvml.nvmlDeviceGetHandleByIndex_v2(i, dev);
                if (rc != nvml.NVML_SUCCESS) {
                    LOG.debug("nvmlDeviceGetHandleByIndex_v2({}) failed: {}", i, nvmlError(rc));
                    continue; // e.g. a GPU this process may not access; cudart fills in if CUDA sees it
                }
                String bus = nvmlBusId(dev);
                if (!bus.isEmpty()) {
                    out.put(bus, describe(dev, i, bus));
                }
            }
            return out;
        } catch (RuntimeException e) {
            LOG.info("NVML query failed: {}", e.toString());
            return Map.of();
        } finally {
            nvml.nvmlShutdown();
        }
    }

    private static NvmlGpu describe(nvmlDevice_st dev, int index, String bus) {
        byte[] name = new byte[nvml.NVML_DEVICE_NAME_V2_BUFFER_SIZE];
        String model = nvml.nvmlDeviceGetName(dev, name, name.length) == nvml.NVML_SUCCESS ? cString(name) : "unknown";
        // Generation: the link's maximum for this GPU in this slot. The current generation drops at
        // idle for power saving, which would make the fingerprint flap between runs.
        int maxGen = intQuery(r -> nvml.nvmlDeviceGetMaxPcieLinkGeneration(dev, r));
        int curGen = intQuery(r -> nvml.nvmlDeviceGetCurrPcieLinkGeneration(dev, r));
        int curWidth = intQuery(r -> nvml.nvmlDeviceGetCurrPcieLinkWidth(dev, r));
        int maxWidth = intQuery(r -> nvml.nvmlDeviceGetMaxPcieLinkWidth(dev, r));
        int gen = maxGen > 0 ? maxGen : curGen;
        // Width: the current one, because a link trained at fewer lanes than its maximum really is slower.
        int width = curWidth > 0 ? curWidth : maxWidth;
        int nvlinks = nvlinkCount(dev);
        long memory = GpuInfo.UNKNOWN;
        try (nvmlMemory_t mem = new nvmlMemory_t()) {
            if (nvml.nvmlDeviceGetMemoryInfo(dev, mem) == nvml.NVML_SUCCESS) {
                memory = mem.total();
            }
        }
        LOG.debug("NVML device {} {} {}: PCIe gen cur {} max {}, width cur {} max {}, NVLinks {}, {} bytes",
                index, bus, model, curGen, maxGen, curWidth, maxWidth, nvlinks, memory);
        return new NvmlGpu(model, gen, width, nvlinks, memory);
    }

    private static int nvlinkCount(nvmlDevice_st dev) {
        int active = 0;
        int[] state = new int[1];
        for (int link = 0; link < nvml.NVML_NVLINK_MAX_LINKS; link++) {
            int rc = nvml.nvmlDeviceGetNvLinkState(dev, link, state);
            if (rc == nvml.NVML_ERROR_NOT_SUPPORTED && link == 0) {
                return 0; // no NVLink on this GPU
            }
            if (rc == nvml.NVML_SUCCESS && state[0] == nvml.NVML_FEATURE_ENABLED) {
                active++;
            }
        }
        return active;
    }

    private interface IntQuery {
        int call(int[] result);
    }

    private static int intQuery(IntQuery q) {
        int[] r = new int[1];
        return q.call(r) == nvml.NVML_SUCCESS ? r[0] : GpuInfo.UNKNOWN;
    }

    private static String nvmlBusId(nvmlDevice_st dev) {
        try (nvmlPciInfo_t pci = new nvmlPciInfo_t()) {
            int rc = nvml.nvmlDeviceGetPciInfo_v3(dev, pci);
            if (rc != nvml.NVML_SUCCESS) {
                LOG.debug("nvmlDeviceGetPciInfo_v3 failed: {}", nvmlError(rc));
                return "";
            }
            return normalizeBusId(pci.busId().getString());
        }
    }

    private static String nvmlError(int rc) {
        try {
            return nvml.nvmlErrorString(rc).getString() + " (" + rc + ")";
        } catch (RuntimeException e) {
            return "NVML error " + rc;
        }
    }

    // ---- cudart fallback ----

    private static String cudaBusId(int ordinal) {
        byte[] buf = new byte[64];
        int rc = cudart.cudaDeviceGetPCIBusId(buf, buf.length, ordinal);
        if (rc != cudart.cudaSuccess) {
            LOG.debug("cudaDeviceGetPCIBusId({}) failed: {}", ordinal, CudaLibraries.cudaError(rc));
            return "";
        }
        return normalizeBusId(cString(buf));
    }

    private static String cudaName(int ordinal) {
        int[] dev = new int[1];
        byte[] name = new byte[256];
        if (cudart.cuDeviceGet(dev, ordinal) == cudart.CUDA_SUCCESS
                && cudart.cuDeviceGetName(name, name.length, dev[0]) == cudart.CUDA_SUCCESS) {
            return cString(name);
        }
        return "unknown";
    }

    private static long cudaMemory(int ordinal) {
        int[] dev = new int[1];
        try (SizeTPointer bytes = new SizeTPointer(1)) {
            if (cudart.cuDeviceGet(dev, ordinal) == cudart.CUDA_SUCCESS
                    && cudart.cuDeviceTotalMem(bytes, dev[0]) == cudart.CUDA_SUCCESS) {
                return bytes.get();
            }
        }
        return GpuInfo.UNKNOWN;
    }

    // ---- pure helpers (unit-tested without a GPU) ----

    /**
     * Canonical PCI address {@code dddd:bb:dd.f}, lower case: CUDA writes {@code 0000:19:00.0},
     * NVML {@code 00000000:19:00.0}, sysfs {@code 0000:19:00.0}. Unparsable input comes back trimmed
     * and lower-cased.
     */
    static String normalizeBusId(String busId) {
        String s = busId.trim().toLowerCase(Locale.ROOT);
        String[] parts = s.split(":");
        try {
            long domain;
            String bus;
            String devFn;
            if (parts.length == 3) {
                domain = Long.parseLong(parts[0], 16);
                bus = parts[1];
                devFn = parts[2];
            } else if (parts.length == 2) {
                domain = 0;
                bus = parts[0];
                devFn = parts[1];
            } else {
                return s;
            }
            String[] df = devFn.split("\\.");
            if (df.length != 2) {
                return s;
            }
            // at least four digits of domain, as Linux names its sysfs entries (a VMD domain: 10000)
            return String.format(Locale.ROOT, "%04x:%02x:%02x.%x", domain, Integer.parseInt(bus, 16), Integer.parseInt(df[0], 16), Integer.parseInt(df[1], 16));
        } catch (NumberFormatException e) {
            return s;
        }
    }

    /** NUMA node from {@code <sysfs>/<busId>/numa_node}; -1 where absent, unreadable or not NUMA. */
    static int numaNode(Path sysfsPciDevices, String busId) {
        if (busId.isEmpty()) {
            return GpuInfo.UNKNOWN;
        }
        Path file = sysfsPciDevices.resolve(busId).resolve("numa_node");
        try {
            int node = Integer.parseInt(Files.readString(file, StandardCharsets.US_ASCII).trim());
            return node >= 0 ? node : GpuInfo.UNKNOWN;
        } catch (IOException | NumberFormatException | SecurityException e) {
            return GpuInfo.UNKNOWN;
        }
    }

    static String cString(byte[] buf) {
        int len = 0;
        while (len < buf.length && buf[len] != 0) {
            len++;
        }
        return new String(buf, 0, len, StandardCharsets.UTF_8).trim();
    }
}
