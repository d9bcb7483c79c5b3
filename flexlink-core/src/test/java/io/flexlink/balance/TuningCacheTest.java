package io.flexlink.balance;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.flexlink.Collective;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The tuning cache: a round trip, and stale or corrupt files ignored. */
class TuningCacheTest {
    @Test
    void serializesAndParses() {
        TuningTable t = new TuningTable();
        t.put("all_reduce/64M", new double[] {0.2512});
        t.put("all_reduce/64K", null);
        TuningTable back = TuningTable.parse(t.serialize("fp", "1"), "fp", "1", 1, "test");
        assertNotNull(back);
        assertArrayEquals(new double[] {0.2512}, back.get("all_reduce/64M"));
        assertEquals(true, back.contains("all_reduce/64K"));
        assertNull(back.get("all_reduce/64K"));
    }

    @Test
    void staleOrCorruptTextIsIgnored() {
        TuningTable t = new TuningTable();
        t.put("all_gather/16M", new double[] {0.2});
        String text = t.serialize("fp", "1");
        assertNull(TuningTable.parse(text, "other-topology", "1", 1, "test"));
        assertNull(TuningTable.parse(text, "fp", "2", 1, "test"));
        assertNull(TuningTable.parse(text.replace("0.2000", "0.9000"), "fp", "1", 1, "test"));
        assertNull(TuningTable.parse(text.substring(0, text.length() / 2), "fp", "1", 1, "test"));
        assertNull(TuningTable.parse("garbage", "fp", "1", 1, "test"));
    }

    @Test
    void restartSkipsTuningAndCorruptFileStartsOver(@TempDir Path dir) throws Exception {
        String extra = "flexlink.tuning.cache=" + dir;
        double tuned;
        try (EmulatedLinks e = new EmulatedLinks("primary:200MB/s,pcie:50MB/s", "auto", Collective.ALL_REDUCE,
                16 << 20, 4, extra)) {
            BalancerEmulationTest.settle(e, 150, 4, null);
            tuned = e.share();
        }
        Path file;
        try (Stream<Path> files = Files.list(dir)) {
            file = files.filter(p -> p.getFileName().toString().startsWith("tuning-")).findFirst().orElseThrow();
        }
        try (EmulatedLinks e = new EmulatedLinks("primary:200MB/s,pcie:50MB/s", "auto", Collective.ALL_REDUCE,
                16 << 20, 4, extra)) {
            e.call();
            assertEquals(BucketTuner.Stage.FINE, e.stage(), "restored from " + file);
            assertEquals(tuned, e.share(), 1e-9, "the share the first run converged to");
        }
        Files.writeString(file, Files.readString(file, StandardCharsets.UTF_8).replace("all_reduce", "all_redux"));
        try (EmulatedLinks e = new EmulatedLinks("primary:200MB/s,pcie:50MB/s", "auto", Collective.ALL_REDUCE,
                16 << 20, 4, extra)) {
            e.call();
            assertEquals(BucketTuner.Stage.PROBE, e.stage(), "a corrupt cache is ignored");
        }
    }
}
