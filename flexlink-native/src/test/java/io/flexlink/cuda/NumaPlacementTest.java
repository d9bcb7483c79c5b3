package io.flexlink.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import io.flexlink.runtime.MemoryPlacement;
import io.flexlink.runtime.shm.ShmSegment;
import io.flexlink.topo.GpuInfo;
import io.flexlink.topo.Topology;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** NUMA placement without a GPU: node discovery, the decision, and mbind on a real mapping. */
class NumaPlacementTest {
    @Test
    void countsTheHostsNodes(@TempDir Path dir) throws Exception {
        Files.createDirectory(dir.resolve("node0"));
        Files.createDirectory(dir.resolve("node1"));
        Files.createDirectory(dir.resolve("power"));
        Files.writeString(dir.resolve("online"), "0-1");
        assertEquals(2, NumaPlacement.hostNodes(dir));
        assertEquals(1, NumaPlacement.hostNodes(dir.resolve("missing")));
    }

    @Test
    void bindsOnlyWhereItPays() {
        assertTrue(NumaPlacement.wanted("auto", 2));
        assertFalse(NumaPlacement.wanted("auto", 1));
        assertFalse(NumaPlacement.wanted("off", 4));
        assertTrue(NumaPlacement.wanted("force", 1));
        Topology t = new Topology("cuda", "test", List.of(new GpuInfo(0, "GPU", "0000:00:06.0", 5, 16, 1, 0, 1L << 30),
                new GpuInfo(1, "GPU", "0000:00:07.0", 5, 16, -1, 0, 1L << 30)));
        Path none = Path.of("/nonexistent-sysfs");
        assertEquals(1, NumaPlacement.nodeOf(t, none, "0000:00:06.0", false));
        assertEquals(-1, NumaPlacement.nodeOf(t, none, "0000:00:07.0", false));
        assertEquals(0, NumaPlacement.nodeOf(t, none, "0000:00:07.0", true));
    }

    /**
     * A region serving another process's GPU (one this process does not see, under CUDA_VISIBLE_DEVICES) goes
     * to the node sysfs gives for its bus id; a key that is no bus id is never looked up.
     */
    @Test
    void aGpuOfAnotherProcessIsPlacedByItsBusId(@TempDir Path sysfs) throws Exception {
        Topology mine = new Topology("cuda", "test",
                List.of(new GpuInfo(0, "GPU", "0000:18:00.0", 5, 16, 0, 0, 1L << 30)));
        Files.createDirectories(sysfs.resolve("0000:ba:00.0"));
        Files.writeString(sysfs.resolve("0000:ba:00.0").resolve("numa_node"), "1\n");
        Files.createDirectories(sysfs.resolve("cuda:1"));
        Files.writeString(sysfs.resolve("cuda:1").resolve("numa_node"), "1\n");
        assertEquals(0, NumaPlacement.nodeOf(mine, sysfs, "0000:18:00.0", false));
        assertEquals(1, NumaPlacement.nodeOf(mine, sysfs, "0000:ba:00.0", false), "another process's GPU");
        assertEquals(-1, NumaPlacement.nodeOf(mine, sysfs, "cuda:1", false), "an ordinal's key is not a bus id");
        assertEquals(-1, NumaPlacement.nodeOf(mine, sysfs, "0000:cc:00.0", false), "no such device");
    }

    @Test
    void bindsEveryRegionOfAMappingToItsNode(@TempDir Path dir) {
        // node 0 exists on every Linux host, NUMA or not: the system call must accept it
        long bytes = 4 * 4096;
        try (ShmSegment seg = ShmSegment.create(dir, bytes)) {
            assertEquals(0, NumaNative.flexlink_numa_bind(seg.address(), 4096, 0));
            Topology t = new Topology("cuda", "test", List.of(new GpuInfo(0, "GPU", "x", 5, 16, 0, 0, 1L << 30)));
            MemoryPlacement p = new MemoryPlacement(new long[] {0, 4096, 8192}, new String[] {"x", "x", "x"});
            assertEquals(3, NumaPlacement.bind(seg.address(), seg.mappedBytes(), p, t, false));
            assertTrue(NumaNative.flexlink_numa_bind(seg.address(), 4096, 100_000) != 0, "a node that cannot exist");
        }
    }

    @Test
    void aHelperThatCannotLoadLeavesTheMemoryUnboundWithoutThrowing() {
        Topology t = new Topology("cuda", "test", List.of(new GpuInfo(0, "GPU", "x", 5, 16, 0, 0, 1L << 30)));
        MemoryPlacement p = new MemoryPlacement(new long[] {0, 4096}, new String[] {"x", "x"});
        int[] calls = new int[1];
        NumaPlacement.Binder missing = (address, len, node) -> {
            calls[0]++;
            throw new UnsatisfiedLinkError("no jniNumaNative in java.library.path");
        };
        assertEquals(0, NumaPlacement.bind(1L << 30, 3 * 4096, p, t, true, missing));
        assertEquals(1, calls[0], "the first failure ends the binding");
    }

    /** Where cudart cannot pin the staging (no CUDA here), the /dev/shm file made for it is gone again. */
    @Test
    void placedStagingThatCannotBePinnedLeavesNoFile(@TempDir Path dir) throws Exception {
        assumeFalse(CudaLibraries.available(), "CUDA is available here: the registration would succeed");
        Topology t = new Topology("cuda", "test", List.of(new GpuInfo(0, "GPU", "x", 5, 16, 0, 0, 1L << 30)));
        MemoryPlacement p = new MemoryPlacement(new long[] {0}, new String[] {"x"});
        PinnedAllocator allocator = new PinnedAllocator(null);
        assertThrows(Throwable.class, () -> allocator.createPlaced(2 * 4096, dir, p, t, true));
        try (Stream<Path> left = Files.list(dir)) {
            assertEquals(List.of(), left.toList());
        }
    }
}
