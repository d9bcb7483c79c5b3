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
        assertEquals(1, NumaPlacement.nodeOf(t, 0, false));
        assertEquals(-1, NumaPlacement.nodeOf(t, 1, false));
        assertEquals(0, NumaPlacement.nodeOf(t, 1, true));
    }

    @Test
    void bindsEveryRegionOfAMappingToItsNode(@TempDir Path dir) {
        // node 0 exists on every Linux host, NUMA or not: the system call must accept it
        long bytes = 4 * 4096;
        try (ShmSegment seg = ShmSegment.create(dir, bytes)) {
            assertEquals(0, NumaNative.flexlink_numa_bind(seg.address(), 4096, 0));
            Topology t = new Topology("cuda", "test", List.of(new GpuInfo(0, "GPU", "x", 5, 16, 0, 0, 1L << 30)));
            MemoryPlacement p = new MemoryPlacement(new long[] {0, 4096, 8192}, new int[] {0, 0, 0});
            assertEquals(3, NumaPlacement.bind(seg.address(), seg.mappedBytes(), p, t, false));
            assertTrue(NumaNative.flexlink_numa_bind(seg.address(), 4096, 100_000) != 0, "a node that cannot exist");
        }
    }

    @Test
    void aHelperThatCannotLoadLeavesTheMemoryUnboundWithoutThrowing() {
        Topology t = new Topology("cuda", "test", List.of(new GpuInfo(0, "GPU", "x", 5, 16, 0, 0, 1L << 30)));
        MemoryPlacement p = new MemoryPlacement(new long[] {0, 4096}, new int[] {0, 0});
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
        MemoryPlacement p = new MemoryPlacement(new long[] {0}, new int[] {0});
        PinnedAllocator allocator = new PinnedAllocator(null);
        assertThrows(Throwable.class, () -> allocator.createPlaced(2 * 4096, dir, p, t, true));
        try (Stream<Path> left = Files.list(dir)) {
            assertEquals(List.of(), left.toList());
        }
    }
}
