package io.flexlink.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What flexlink-perf refuses, each with exit code 2 and one line on stderr naming the argument: nonsense
 * (issue 13 item 8), nccl-tests features FlexLink does not have yet, and what this backend cannot do (-G
 * on the host backend). Nothing runs: no table is printed.
 */
class PerfRefusalsTest {
    @TempDir
    Path tmp;

    static PerfMainTest.Outcome perf(Map<String, String> env, String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code;
        try (PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
             PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
            code = PerfMain.run(args, o, e, env);
        }
        return new PerfMainTest.Outcome(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    private static String[] args(String line, String... more) {
        List<String> a = new java.util.ArrayList<>(List.of(line.trim().split("\\s+")));
        a.addAll(List.of(more));
        return a.toArray(new String[0]);
    }

    /** Exit 2, one line starting with the tool's name and containing {@code says}, and nothing run. */
    static void refused(PerfMainTest.Outcome o, String says) {
        assertEquals(PerfMain.EXIT_USAGE, o.code, o::toString);
        assertEquals(1, o.errLines().size(), o::toString);
        assertTrue(o.errLines().get(0).startsWith("flexlink-perf: "), o::toString);
        assertTrue(o.err.contains(says), () -> "expected '" + says + "' in\n" + o);
        assertFalse(o.err.contains("\tat "), o::toString);
        assertFalse(o.out.contains("# Collective test starting"), "nothing may run:\n" + o);
    }

    private static PerfMainTest.Outcome perf(String line, String... more) {
        return perf(Map.of(), args(line, more));
    }

    @Test
    void hypercubeRefusesRankCountsThatAreNoPowerOfTwo() {
        for (String ranks : new String[] {"3", "5", "6"}) {
            refused(perf("hypercube -b 1K -e 1K --backend host -g " + ranks), "hypercube: " + ranks
                    + " ranks is not a power of two");
        }
        refused(perf("hypercube_perf -b 1K -e 1K --backend host -t 3 -g 2"), "hypercube: 6 ranks");
    }

    @Test
    void anUnknownCollectiveListsNcclTestsNames() {
        refused(perf("all_scatter -b 1K -e 1K --backend host"), "unknown 'all_scatter' (nccl-tests' are all_reduce, "
                + "all_gather, reduce_scatter, broadcast, reduce, alltoall");
    }

    @Test
    void featuresTheCoreLacksAreRefusedSayingWhat() {
        refused(perf("all_reduce -b 1K -e 1K --backend host -G 1"), "-G 1: the host backend's streams cannot be "
                + "captured into a CUDA graph (stream perf.graph-probe: this backend has no CUDA graphs to capture "
                + "into); run without -G (or -G 0), or on the CUDA backend");
        refused(perf("alltoall -b 1K -e 1K --backend host -g 2 -G 5"), "-G 5: the host backend's streams cannot");
        refused(perf("all_reduce -b 1K -e 1K --backend host -G 1 -I 1"), "-I: per-iteration timing is incompatible "
                + "with CUDA graph mode (-G 1)");
        for (String z : new String[] {"1", "2", "3"}) {
            refused(perf("all_reduce -b 1K -e 1K --backend host -G 2 -z " + z), "-z " + z + ": blocking waits are "
                    + "incompatible with CUDA graph mode (-G 2)");
        }
        refused(perf("all_reduce -b 1K -e 1K --backend host -R 2"), "-R 2: symmetric registration "
                + "(ncclCommWindowRegister with NCCL_WIN_COLL_SYMMETRIC) is not available in flexlink-perf");
        refused(perf("all_reduce -b 1K -e 1K --backend host -R 3"), "-R: must be 0, 1 (local) or 2 (symmetric)");
        refused(perf("all_reduce -b 1K -e 1K --backend host -G -1"), "-G: must not be negative");
    }

    @Test
    void nonsenseListsAndSharesAreErrors() {
        refused(perf("all_reduce -b 1K -e 1K --backend host -d ,"), "-d: empty entry in ','");
        refused(perf("all_reduce -b 1K -e 1K --backend host -d float,"), "-d: empty entry");
        refused(perf("all_reduce -b 1K -e 1K --backend host -o ,sum"), "-o: empty entry");
        refused(perf("all_reduce -b 1K -e 1K --backend host --share pcie=0.2,pcie=0.3"),
                "--share: path 'pcie' is given twice");
        refused(perf(Map.of(), "all_reduce", "-b", "1K", "-e", "1K", "--backend", "host", "--share", ""),
                "--share: empty");
        refused(perf(Map.of(), "all_reduce", "-b", "1K", "-e", "1K", "--backend", "host", "--share", " , "),
                "--share: ");
    }

    @Test
    void rangesOfTheNewOptionsAreChecked() {
        refused(perf("all_reduce -b 1K -e 1K --backend host -c -1"), "-c: the number of checked calls");
        refused(perf("all_reduce -b 1K -e 1K --backend host -z 4"), "-z: must be 0, 1, 2 or 3");
        refused(perf("all_reduce -b 1K -e 1K --backend host -a 4"), "-a: must be 0 (rank 0), 1 (average)");
        refused(perf("all_reduce -b 1K -e 1K --backend host -I 2"), "-I: must be 0 or 1");
        refused(perf("all_reduce -b 1K -e 1K --backend host -n 4 -I 1 -K 4"), "-K: must be between 0 and -n - 1 = 3");
        refused(perf("all_reduce -b 1K -e 1K --backend host -K 1"), "-K: needs -I 1");
        refused(perf("all_reduce -b 1K -e 1K --backend host -m 0"), "-m: at least one call");
        refused(perf("all_reduce -b 1K -e 1K --backend host -N -1"), "-N: must be 0");
        refused(perf("all_reduce -b 1K -e 1K --backend host -t 0"), "-t: at least one thread");
        refused(perf("all_reduce -b 1K -e 1K --backend host -t 64 -g 64"), "-t x -g: at most 1024 ranks");
        refused(perf("all_reduce -b 1K -e 1K --backend host -T -1"), "-T: must not be negative");
        refused(perf("all_reduce -b 1K -e 1K --backend host -u -1"), "-u: must be between 0");
        refused(perf("all_reduce -b 1.5x -e 1K --backend host"), "'1.5x' is not a size in bytes");
        refused(perf("broadcast -b 1K -e 1K --backend host -g 2 -r 2"), "-r: root 2 is not a rank of 2");
    }

    @Test
    void unwritableReportFilesAreRefusedBeforeTheRun() throws Exception {
        Path file = tmp.resolve("blocker");
        Files.writeString(file, "a file where a folder should be");
        refused(perf("all_reduce -b 1K -e 1K --backend host --json", file.resolve("run.json").toString()), "--json: ");
        refused(perf("all_reduce -b 1K -e 1K --backend host --plot", tmp.toString()), "--plot: " + tmp
                + " is a directory");
        Path readOnly = tmp.resolve("ro.json");
        Files.writeString(readOnly, "{}");
        assertTrue(readOnly.toFile().setWritable(false));
        if (!Files.isWritable(readOnly)) { // root may write anyway: then there is nothing to refuse
            refused(perf("all_reduce -b 1K -e 1K --backend host --json", readOnly.toString()), "cannot be written");
        }
        // a file that could be written is not left behind by the check when the run then fails
        Path fresh = tmp.resolve("sub/fresh.json");
        refused(perf("all_reduce -b 1K -e 1K --backend host -z 9 --json", fresh.toString()), "-z");
        assertFalse(Files.exists(fresh), "nothing written for a refused run");
    }

    @Test
    void nccltestsMinBandwidthMustBeANumber() {
        Map<String, String> env = new HashMap<>();
        env.put("NCCL_TESTS_MIN_BW", "fast");
        refused(perf(env, args("all_reduce -b 1K -e 1K --backend host")), "NCCL_TESTS_MIN_BW: 'fast' is not a bandwidth");
    }

    @Test
    void nccltestsOptionsFlexLinkDoesNotHaveAreUnknownNotMisread() {
        // -V is nccl-tests' device CTA count: it must not print a version and exit 0
        refused(perf("all_reduce -b 1K -e 1K --backend host -V 16"), "-V");
        refused(perf("all_reduce -b 1K -e 1K --backend host -D 1"), "-D");
        PerfMainTest.Outcome v = perf("--version");
        assertEquals(0, v.code, v::toString);
        assertTrue(v.out.startsWith("flexlink-perf " + io.flexlink.FlexLink.VERSION + " (nccl-tests "
                + PerfHeader.NCCL_TESTS_VERSION), v::toString);
    }
}
