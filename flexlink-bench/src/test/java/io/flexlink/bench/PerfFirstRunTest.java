package io.flexlink.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.flexlink.runtime.BackendProvider;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a newcomer sees from the README's first command on a machine without a GPU: flexlink-perf's
 * main in a JVM of its own (the java launcher on the test class path, as the script's {@code java -jar}
 * runs it; logging is configured per JVM, so in process the -v run would depend on earlier tests). By
 * default the backend is one short line and nothing is colored or long; the long reason why CUDA is
 * unusable shows with --verbose only. Skipped where CUDA is usable, since the line is then another.
 */
class PerfFirstRunTest {
    /** The README's command with a sweep cut short (same collective, ranks and share). */
    private static final String ARGS = "all_reduce -b 1K -e 64K -f 4 -g 4 --share pcie=0.25 -n 2 -w 1";
    private static String reason;

    @TempDir
    Path tmp;


    @BeforeAll
    static void cudaUnusableHere() {
        for (BackendProvider p : ServiceLoader.load(BackendProvider.class)) {
            if (p.name().equals("cuda")) {
                reason = p.unavailableReason();
            }
        }
        assumeTrue(reason != null, "CUDA is usable here: the backend line says a GPU was found");
    }

    private PerfMainTest.Outcome perf(String name, String extra) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), PerfMain.class.getName()));
        cmd.addAll(List.of((ARGS + extra).split(" ")));
        File out = tmp.resolve(name + ".out").toFile();
        File err = tmp.resolve(name + ".err").toFile();
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectOutput(out).redirectError(err);
        pb.environment().keySet().removeIf(k -> k.startsWith("NCCL_TESTS_") || k.startsWith("FLEXLINK_"));
        Process p = pb.start();
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("flexlink-perf did not end in 120 s: " + cmd);
        }
        return new PerfMainTest.Outcome(p.exitValue(), Files.readString(out.toPath(), StandardCharsets.UTF_8),
                Files.readString(err.toPath(), StandardCharsets.UTF_8));
    }

    private static List<String> lines(PerfMainTest.Outcome r) {
        List<String> l = new ArrayList<>(List.of(r.out.split("\n")));
        l.addAll(List.of(r.err.split("\n")));
        return l;
    }

    @Test
    void theDefaultOutputSaysNoGpuInOneShortLineAndTheReasonOnlyWithVerbose() throws Exception {
        PerfMainTest.Outcome plain = perf("plain", "");
        assertEquals(PerfMain.EXIT_OK, plain.code, plain::toString);
        assertFalse((plain.out + plain.err).contains("\u001b"), () -> "an ANSI escape:\n" + plain);
        String backend = lines(plain).stream().filter(l -> l.startsWith("# Backend:")).findFirst()
                .orElseThrow(() -> new AssertionError("no backend line:\n" + plain));
        assertEquals("# Backend: host (no GPU: host backend)", backend.trim());
        assertTrue(backend.length() < 120, backend);
        for (String l : lines(plain)) {
            assertTrue(l.length() <= 200, () -> l.length() + " characters: " + l);
        }
        // the reason's start (e.g. "cannot load the CUDA runtime (...)"), never its library paths in full
        String start = reason.substring(0, Math.min(40, reason.length()));
        assertFalse((plain.out + plain.err).contains(start), () -> "the reason without --verbose:\n" + plain);

        PerfMainTest.Outcome verbose = perf("verbose", " --verbose");
        assertEquals(PerfMain.EXIT_OK, verbose.code, verbose::toString);
        assertFalse((verbose.out + verbose.err).contains("\u001b"), () -> "an ANSI escape:\n" + verbose);
        assertTrue(verbose.err.contains(start), () -> "no reason with --verbose (" + start + "):\n" + verbose);
        assertTrue(verbose.out.contains(backend), verbose::toString);
    }
}
