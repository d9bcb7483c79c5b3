package io.flexlink.balance;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Queue;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The tuning cache is written off the calling thread, requests fold together, and close flushes. */
class TuningCacheWriterTest {
    private static final String FP = "fp";
    private static final String VERSION = "1";

    @Test
    void requestsFoldIntoOneWriteOfTheLatestTable(@TempDir Path dir) {
        Queue<Runnable> tasks = new ArrayDeque<>();
        TuningTable table = new TuningTable();
        try (TuningCacheWriter writer = new TuningCacheWriter(dir, FP, VERSION, tasks::add)) {
            table.put("all_reduce/64M", new double[] {0.25});
            writer.accept(table);
            table.put("all_gather/64M", new double[] {0.125});
            writer.accept(table);
            assertEquals(1, tasks.size(), "a second request while one is pending adds no write");
            assertTrue(writer.pending());
            assertFalse(Files.exists(TuningTable.file(dir, FP)), "nothing written on the calling thread");
            tasks.remove().run();
            assertFalse(writer.pending());
            TuningTable back = TuningTable.load(dir, FP, VERSION, 1);
            assertArrayEquals(new double[] {0.25}, back.get("all_reduce/64M"));
            assertArrayEquals(new double[] {0.125}, back.get("all_gather/64M"), "the table as it was at the write");

            table.put("all_reduce/64M", new double[] {0.3});
            writer.accept(table);
            assertEquals(1, tasks.size(), "a request after the write schedules another");
            tasks.remove().run();
            assertArrayEquals(new double[] {0.3}, TuningTable.load(dir, FP, VERSION, 1).get("all_reduce/64M"));
        }
    }

    @Test
    void closeWritesWhatIsPendingAndIgnoresLaterRequests(@TempDir Path dir) {
        Queue<Runnable> tasks = new ArrayDeque<>();
        TuningTable table = new TuningTable();
        table.put("reduce_scatter/1G", new double[] {0.2});
        TuningCacheWriter writer = new TuningCacheWriter(dir, FP, VERSION, tasks::add);
        writer.accept(table);
        writer.close();
        assertArrayEquals(new double[] {0.2}, TuningTable.load(dir, FP, VERSION, 1).get("reduce_scatter/1G"));
        tasks.remove().run(); // the stale task finds nothing pending and writes nothing more
        table.put("reduce_scatter/1G", new double[] {0.9});
        writer.accept(table);
        writer.close();
        assertTrue(tasks.isEmpty(), "no write after close");
        assertArrayEquals(new double[] {0.2}, TuningTable.load(dir, FP, VERSION, 1).get("reduce_scatter/1G"));
    }

    @Test
    void ownThreadWritesAndCloseWaitsForIt(@TempDir Path dir) throws Exception {
        TuningTable table = new TuningTable();
        table.put("broadcast/256M", null);
        TuningCacheWriter writer = new TuningCacheWriter(dir, FP, VERSION);
        writer.accept(table);
        writer.close(); // waits for the write under way, or does it itself
        assertTrue(TuningTable.load(dir, FP, VERSION, 1).contains("broadcast/256M"));
        try (Stream<Path> files = Files.list(dir)) {
            assertEquals(1, files.count(), "one cache file, no temp file left");
        }
    }
}
