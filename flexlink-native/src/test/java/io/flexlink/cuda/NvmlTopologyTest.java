package io.flexlink.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.flexlink.topo.GpuInfo;
import io.flexlink.topo.Topology;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class NvmlTopologyTest {

    @Test
    void busIdsFromCudaNvmlAndSysfsNormalizeAlike() {
        assertEquals("0000:19:00.0", NvmlTopology.normalizeBusId("0000:19:00.0"));
        assertEquals("0000:19:00.0", NvmlTopology.normalizeBusId("00000000:19:00.0"));
        assertEquals("0000:3b:00.0", NvmlTopology.normalizeBusId(" 00000000:3B:00.0 "));
        assertEquals("0000:3b:00.0", NvmlTopology.normalizeBusId("3B:00.0"));
        assertEquals("0001:c1:1f.7", NvmlTopology.normalizeBusId("00000001:C1:1F.7"));
        assertEquals("10000:01:00.0", NvmlTopology.normalizeBusId("00010000:01:00.0"));
        assertEquals("garbage", NvmlTopology.normalizeBusId("GARBAGE"));
        assertEquals("zz:yy:00.0", NvmlTopology.normalizeBusId("zz:yy:00.0"));
    }

    @Test
    void numaNodeComesFromSysfs(@TempDir Path sys) throws IOException {
        Path dev = Files.createDirectories(sys.resolve("0000:19:00.0"));
        Files.writeString(dev.resolve("numa_node"), "1\n", StandardCharsets.US_ASCII);
        Path none = Files.createDirectories(sys.resolve("0000:3b:00.0"));
        Files.writeString(none.resolve("numa_node"), "-1\n", StandardCharsets.US_ASCII);
        assertEquals(1, NvmlTopology.numaNode(sys, "0000:19:00.0"));
        assertEquals(-1, NvmlTopology.numaNode(sys, "0000:3b:00.0"));
        assertEquals(-1, NvmlTopology.numaNode(sys, "0000:99:00.0"));
        assertEquals(-1, NvmlTopology.numaNode(sys, ""));
    }

    @Test
    void cStringStopsAtNul() {
        assertEquals("NVIDIA H200", NvmlTopology.cString("NVIDIA H200\0junk".getBytes(StandardCharsets.US_ASCII)));
        assertEquals("abc", NvmlTopology.cString("abc".getBytes(StandardCharsets.US_ASCII)));
    }

    @Test
    @Tag("gpu")
    void detectsEveryVisibleDevice() {
        assumeTrue(CudaLibraries.available(), CudaLibraries::unavailableReason);
        Topology t = NvmlTopology.detect("test");
        System.out.println("topology: " + t.describe());
        assertEquals(CudaLibraries.deviceCount(), t.gpuCount());
        for (GpuInfo g : t.gpus()) {
            assertFalse(g.model().isBlank());
            assertTrue(g.pciBusId().matches("[0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}\\.[0-7]"), g.pciBusId());
            assertTrue(g.memoryBytes() > 0, g.describe());
            if (CudaLibraries.nvmlAvailable()) {
                assertTrue(g.pcieGeneration() >= 1, g.describe());
                assertTrue(g.pcieWidth() >= 1, g.describe());
                assertTrue(g.nvlinkCount() >= 0, g.describe());
            }
        }
        assertEquals(t.fingerprint(), NvmlTopology.detect("test").fingerprint(), "fingerprint must be stable");
    }
}
