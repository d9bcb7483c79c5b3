package io.flexlink.topo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

class TopologyTest {

    private static GpuInfo h200(int ordinal, String bus, int numa) {
        return new GpuInfo(ordinal, "NVIDIA H200", bus, 5, 16, numa, 18, 150_754_820_096L);
    }

    private static Topology twoH200() {
        return new Topology("cuda", "flexlink-0.1.0/nccl-2.28.3",
                List.of(h200(0, "0000:19:00.0", 0), h200(1, "0000:3b:00.0", 0)));
    }

    @Test
    void fingerprintIsStableAcrossInstancesAndRuns() {
        Topology a = twoH200();
        Topology b = twoH200();
        assertEquals(a.fingerprint(), b.fingerprint());
        assertEquals(64, a.fingerprint().length());
        assertTrue(a.fingerprint().matches("[0-9a-f]{64}"));
        // Golden value: a change here silently invalidates every tuning cache; bump the format instead.
        assertEquals("ba06cf7e77d52fbd1c296551f6510a583e5c284e2c0267ff19ef5bc942f0fab1", a.fingerprint());
    }

    @Test
    void fingerprintIgnoresHostSpecificFields() {
        Topology other = new Topology("cuda", "flexlink-0.1.0/nccl-2.28.3", List.of(
                new GpuInfo(0, "NVIDIA H200", "0000:aa:00.0", 5, 16, 1, 18, 1L << 30),
                new GpuInfo(1, "NVIDIA H200", "", 5, 16, -1, 18, -1)));
        assertEquals(twoH200().fingerprint(), other.fingerprint());
    }

    @Test
    void fingerprintChangesWhenAnyInputChanges() {
        List<Topology> variants = new ArrayList<>();
        Topology base = twoH200();
        variants.add(base);
        variants.add(new Topology("host", base.libraryVersion(), base.gpus()));
        variants.add(new Topology(base.backend(), "flexlink-0.1.1/nccl-2.28.3", base.gpus()));
        variants.add(new Topology(base.backend(), base.libraryVersion(), base.gpus().subList(0, 1)));
        variants.add(new Topology(base.backend(), base.libraryVersion(),
                List.of(h200(0, "", 0), h200(1, "", 0), h200(2, "", 0))));
        variants.add(new Topology(base.backend(), base.libraryVersion(), List.of()));
        variants.add(withSecond(base, g -> new GpuInfo(1, "NVIDIA H100", g.pciBusId(), 5, 16, 0, 18, g.memoryBytes())));
        variants.add(withSecond(base, g -> new GpuInfo(1, g.model(), g.pciBusId(), 4, 16, 0, 18, g.memoryBytes())));
        variants.add(withSecond(base, g -> new GpuInfo(1, g.model(), g.pciBusId(), 5, 8, 0, 18, g.memoryBytes())));
        variants.add(withSecond(base, g -> new GpuInfo(1, g.model(), g.pciBusId(), 5, 16, 0, 0, g.memoryBytes())));
        variants.add(withSecond(base, g -> new GpuInfo(1, g.model(), g.pciBusId(), -1, 16, 0, 18, g.memoryBytes())));
        Set<String> prints = new HashSet<>();
        for (Topology t : variants) {
            assertTrue(prints.add(t.fingerprint()), () -> "duplicate fingerprint for " + t.describe());
        }
    }

    @Test
    void fieldBoundariesAreUnambiguous() {
        Topology a = new Topology("ab", "c", List.of());
        Topology b = new Topology("a", "bc", List.of());
        assertNotEquals(a.fingerprint(), b.fingerprint());
    }

    @Test
    void describeIsOneLineWithEveryGpu() {
        String d = twoH200().describe();
        assertTrue(!d.contains("\n"), d);
        assertTrue(d.startsWith("backend=cuda gpus=2 "), d);
        assertTrue(d.contains("[0:NVIDIA H200@0000:19:00.0 Gen5x16 numa0 nvl18 140GiB]"), d);
        assertTrue(d.contains("fp=" + twoH200().fingerprint().substring(0, 12)), d);
        String unknown = new GpuInfo(0, "X", "", -1, -1, -1, -1, -1).describe();
        assertEquals("0:X Gen?x? numa? nvl? ?GiB", unknown);
    }

    @Test
    void validatesInputs() {
        assertThrows(IllegalArgumentException.class, () -> new GpuInfo(-1, "x", "", 1, 1, 0, 0, 0));
        assertThrows(IllegalArgumentException.class, () -> new GpuInfo(0, "x", "", -2, 1, 0, 0, 0));
        assertThrows(NullPointerException.class, () -> new GpuInfo(0, null, "", 1, 1, 0, 0, 0));
        assertThrows(IllegalArgumentException.class,
                () -> new Topology("cuda", "v", List.of(h200(1, "", 0))));
        List<GpuInfo> mutable = new ArrayList<>(List.of(h200(0, "", 0)));
        Topology t = new Topology("cuda", "v", mutable);
        mutable.clear();
        assertEquals(1, t.gpuCount());
        assertEquals(t, new Topology("cuda", "v", List.of(h200(0, "", 0))));
        assertEquals(t.hashCode(), new Topology("cuda", "v", List.of(h200(0, "", 0))).hashCode());
    }

    private static Topology withSecond(Topology base, UnaryOperator<GpuInfo> change) {
        return new Topology(base.backend(), base.libraryVersion(),
                List.of(base.gpu(0), change.apply(base.gpu(1))));
    }
}
