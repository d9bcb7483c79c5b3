package io.flexlink.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The repository's ./flexlink-perf script, run by bash in a copy of the repository's layout whose
 * {@code mvn} and {@code java} are stand-ins on PATH (a real build takes minutes): Maven's output, colored
 * or not, goes to the build log and never to the terminal; a failed build's tail is shown without
 * escapes; Maven is asked for batch mode, no transfer progress and no colors; a jar newer than the sources
 * is run without building.
 */
class PerfScriptTest {
    private static final Path SCRIPT = Path.of("..", "flexlink-perf");
    /** Prints Maven's kind of escapes; fails with MVN_FAIL=1, else writes the jar. */
    private static final String MVN = "#!/bin/sh\n"
            + "echo \"$@\" > \"$MVN_ARGS\"\n"
            + "printf '\\033[1;31m[ERROR]\\033[0m the compiler said no\\n'\n"
            + "[ \"$MVN_FAIL\" = 1 ] && exit 1\n"
            + "mkdir -p flexlink-bench/target && : > flexlink-bench/target/flexlink-perf.jar\n"
            + "printf '\\033[0m\\033[0m'\n";
    private static final String JAVA = "#!/bin/sh\necho \"java $*\"\n";

    @TempDir
    Path tmp;
    private Path repo;


    @BeforeEach
    void layout() throws Exception {
        assumeTrue(Files.isRegularFile(SCRIPT), "no ../flexlink-perf from " + Path.of("").toAbsolutePath());
        assumeTrue(new File("/bin/bash").canExecute() || new File("/usr/bin/bash").canExecute(), "no bash");
        repo = Files.createDirectories(tmp.resolve("repo"));
        Files.copy(SCRIPT, repo.resolve("flexlink-perf"));
        Path src = Files.createDirectories(repo.resolve("flexlink-bench/src/main"));
        FileTime old = FileTime.fromMillis(System.currentTimeMillis() - 3_600_000);
        for (Path p : List.of(repo.resolve("pom.xml"), repo.resolve("flexlink-bench/pom.xml"), src.resolve("A.java"))) {
            Files.writeString(p, "x");
            Files.setLastModifiedTime(p, old); // older than any jar the stand-in writes
        }
        Path bin = Files.createDirectories(tmp.resolve("bin"));
        for (String[] tool : new String[][] {{"mvn", MVN}, {"java", JAVA}}) {
            Path t = bin.resolve(tool[0]);
            Files.writeString(t, tool[1]);
            Files.setPosixFilePermissions(t, PosixFilePermissions.fromString("rwxr-xr-x"));
        }
    }

    private PerfMainTest.Outcome script(boolean mvnFails) throws Exception {
        ProcessBuilder pb = new ProcessBuilder("bash", repo.resolve("flexlink-perf").toString(), "all_reduce", "-g", "4")
                .redirectOutput(tmp.resolve("out").toFile()).redirectError(tmp.resolve("err").toFile());
        pb.environment().put("PATH", tmp.resolve("bin") + File.pathSeparator + System.getenv("PATH"));
        pb.environment().put("MVN_ARGS", tmp.resolve("mvn-args").toString());
        pb.environment().put("MVN_FAIL", mvnFails ? "1" : "0");
        Process p = pb.start();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("the script did not end in 60 s");
        }
        return new PerfMainTest.Outcome(p.exitValue(), Files.readString(tmp.resolve("out"), StandardCharsets.UTF_8),
                Files.readString(tmp.resolve("err"), StandardCharsets.UTF_8));
    }

    @Test
    void aBuildShowsOneLineAndRunsTheJar() throws Exception {
        PerfMainTest.Outcome r = script(false);
        assertEquals(0, r.code, r::toString);
        assertEquals("java -jar flexlink-bench/target/flexlink-perf.jar all_reduce -g 4\n", r.out, r::toString);
        assertEquals(List.of("flexlink-perf: building it first (about a minute; log in flexlink-bench/target/build.log)"),
                r.err.lines().toList(), r::toString);
        // Maven's escapes went to the log, not to the terminal
        assertTrue(Files.readString(repo.resolve("flexlink-bench/target/build.log")).contains("\u001b[0m"));
        List<String> args = List.of(Files.readString(tmp.resolve("mvn-args")).trim().split(" "));
        assertTrue(args.contains("-B") && args.contains("-Dstyle.color=never")
                && (args.contains("-ntp") || args.contains("--no-transfer-progress")), args::toString);
        assertFalse(args.contains("install"), args::toString);

        Files.delete(tmp.resolve("mvn-args"));
        PerfMainTest.Outcome again = script(false);
        assertEquals(0, again.code, again::toString);
        assertEquals("", again.err, "a jar newer than the sources runs without a build");
        assertFalse(Files.exists(tmp.resolve("mvn-args")), "Maven was called again");
    }

    @Test
    void aFailedBuildShowsTheLogsTailWithoutEscapes() throws Exception {
        PerfMainTest.Outcome r = script(true);
        assertEquals(1, r.code, r::toString);
        assertEquals("", r.out, r::toString);
        assertFalse(r.err.contains("\u001b"), r::toString);
        assertTrue(r.err.contains("flexlink-perf: the build failed; the end of flexlink-bench/target/build.log:"), r::toString);
        assertTrue(r.err.contains("[ERROR] the compiler said no"), r::toString);
    }
}
