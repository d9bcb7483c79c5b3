package io.flexlink.cuda;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class KernelCacheTest {

    private static final String SRC = "extern \"C\" __global__ void k(float* p) { p[0] = 1.f; }";

    @TempDir
    Path dir;

    private static byte[] image(int size, long seed) {
        byte[] b = new byte[size];
        new Random(seed).nextBytes(b);
        return b;
    }

    @Test
    void keyIsStableHexAndCoversEveryInput() {
        String k = KernelCache.key(SRC, "sm_90", "13.0", List.of("-std=c++17"));
        assertEquals(k, KernelCache.key(SRC, "sm_90", "13.0", List.of("-std=c++17")));
        assertTrue(k.matches("[0-9a-f]{64}"), k);
        Set<String> keys = new HashSet<>();
        keys.add(k);
        keys.add(KernelCache.key(SRC + " ", "sm_90", "13.0", List.of("-std=c++17")));
        keys.add(KernelCache.key(SRC, "sm_80", "13.0", List.of("-std=c++17")));
        keys.add(KernelCache.key(SRC, "compute_90", "13.0", List.of("-std=c++17")));
        keys.add(KernelCache.key(SRC, "sm_90", "13.1", List.of("-std=c++17")));
        keys.add(KernelCache.key(SRC, "sm_90", "13.0", List.of()));
        keys.add(KernelCache.key(SRC, "sm_90", "13.0", List.of("-std=c++17", "-lineinfo")));
        keys.add(KernelCache.key(SRC, "sm_90", "13.0", List.of("-lineinfo", "-std=c++17")));
        assertEquals(8, keys.size());
        // concatenation ambiguity
        assertNotEquals(KernelCache.key("ab", "c", "v", List.of()), KernelCache.key("a", "bc", "v", List.of()));
        assertNotEquals(KernelCache.key("s", "a", "v", List.of("x", "y")), KernelCache.key("s", "a", "v", List.of("xy")));
    }

    @Test
    void roundTripLeavesNoTempFiles() throws IOException {
        KernelCache cache = new KernelCache(dir.resolve("nested/kernels"));
        String key = KernelCache.key(SRC, "sm_90", "13.0", List.of());
        assertTrue(cache.read(key).isEmpty());
        byte[] img = image(10_000, 1);
        assertTrue(cache.write(key, img));
        assertArrayEquals(img, cache.read(key).orElseThrow());
        byte[] img2 = image(77, 2);
        assertTrue(cache.write(key, img2));
        assertArrayEquals(img2, cache.read(key).orElseThrow());
        assertTrue(cache.write(KernelCache.key(SRC, "sm_80", "13.0", List.of()), new byte[0]));
        assertArrayEquals(new byte[0], cache.read(KernelCache.key(SRC, "sm_80", "13.0", List.of())).orElseThrow());
        try (Stream<Path> files = Files.list(cache.directory())) {
            List<String> names = files.map(p -> p.getFileName().toString()).toList();
            assertEquals(2, names.size(), names.toString());
            assertTrue(names.stream().noneMatch(n -> n.endsWith(".tmp")), names.toString());
        }
    }

    @Test
    void truncatedFileIsIgnoredDeletedAndRebuilt() throws IOException {
        KernelCache cache = new KernelCache(dir);
        String key = KernelCache.key(SRC, "sm_90", "13.0", List.of());
        byte[] img = image(5000, 3);
        cache.write(key, img);
        Path f = cache.fileFor(key);
        byte[] all = Files.readAllBytes(f);
        Files.write(f, java.util.Arrays.copyOf(all, all.length - 1));
        assertTrue(cache.read(key).isEmpty());
        assertFalse(Files.exists(f), "corrupt file should be removed");
        assertTrue(cache.write(key, img));
        assertArrayEquals(img, cache.read(key).orElseThrow());
    }

    @Test
    void corruptPayloadHeaderAndShortFilesAreIgnored() throws IOException {
        KernelCache cache = new KernelCache(dir);
        String key = KernelCache.key(SRC, "sm_90", "13.0", List.of());
        Path f = cache.fileFor(key);

        cache.write(key, image(4096, 4));
        byte[] all = Files.readAllBytes(f);
        all[all.length - 100] ^= 0x40; // payload bit flip
        Files.write(f, all);
        assertTrue(cache.read(key).isEmpty());

        cache.write(key, image(4096, 4));
        all = Files.readAllBytes(f);
        all[0] = 'X'; // bad magic
        Files.write(f, all);
        assertTrue(cache.read(key).isEmpty());

        Files.write(f, new byte[] {1, 2, 3});
        assertTrue(cache.read(key).isEmpty());

        Files.write(f, new byte[0]);
        assertTrue(cache.read(key).isEmpty());

        cache.write(key, image(64, 5));
        all = Files.readAllBytes(f);
        byte[] longer = java.util.Arrays.copyOf(all, all.length + 10); // trailing garbage
        Files.write(f, longer);
        assertTrue(cache.read(key).isEmpty());
    }

    @Test
    void unwritableDirectoryDisablesCachingWithoutThrowing() throws IOException {
        Path notADir = dir.resolve("file");
        Files.writeString(notADir, "x");
        KernelCache cache = new KernelCache(notADir);
        String key = KernelCache.key(SRC, "sm_90", "13.0", List.of());
        assertFalse(cache.write(key, image(10, 6)));
        assertTrue(cache.read(key).isEmpty());
    }

    @Test
    void rejectsKeysThatAreNotDigests() {
        KernelCache cache = new KernelCache(dir);
        assertThrows(IllegalArgumentException.class, () -> cache.fileFor("../../etc/passwd"));
        assertThrows(IllegalArgumentException.class, () -> cache.read("ABC"));
    }

    @Test
    void defaultDirectoryIsUnderUserHome() {
        assertEquals(Path.of(System.getProperty("user.home"), ".cache", "flexlink", "kernels"),
                KernelCache.defaultDirectory());
    }
}
