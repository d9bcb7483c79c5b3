package io.flexlink.bench;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * flexlink-perf as a multi-process job for tests: one JVM per rank running {@link PerfMain} with
 * {@code --from-env}, torchrun's variables on loopback and a free port, plus each rank's own variables
 * (its node id, its local rank). Each child's stdout and stderr go to files.
 */
final class PerfJob implements AutoCloseable {
    private final List<Process> processes = new ArrayList<>();
    private final List<Path> out = new ArrayList<>();
    private final List<Path> err = new ArrayList<>();

    PerfJob(List<String> args, Map<String, String> env, List<Map<String, String>> perRank, Path dir)
            throws IOException {
        int n = perRank.size();
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String cp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        for (int r = 0; r < n; r++) {
            List<String> cmd = new ArrayList<>(List.of(java, "-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                    "-cp", cp, PerfMain.class.getName()));
            cmd.addAll(args);
            ProcessBuilder pb = new ProcessBuilder(cmd);
            Map<String, String> e = pb.environment();
            e.putAll(env);
            e.put("RANK", String.valueOf(r));
            e.put("WORLD_SIZE", String.valueOf(n));
            e.put("MASTER_ADDR", "127.0.0.1");
            e.put("MASTER_PORT", String.valueOf(port));
            e.putAll(perRank.get(r));
            Path o = dir.resolve("rank" + r + ".out");
            Path x = dir.resolve("rank" + r + ".err");
            out.add(o);
            err.add(x);
            pb.redirectOutput(o.toFile());
            pb.redirectError(x.toFile());
            processes.add(pb.start());
        }
    }

    /** Rank r's exit code, or -1 when it has not exited within {@code seconds}. */
    int awaitExit(int r, long seconds) throws InterruptedException {
        Process p = processes.get(r);
        return p.waitFor(seconds, TimeUnit.SECONDS) ? p.exitValue() : -1;
    }

    String stdout(int r) throws IOException {
        return Files.readString(out.get(r));
    }

    /** Everything each rank said, for assertion messages. */
    String describe() {
        StringBuilder sb = new StringBuilder();
        for (int r = 0; r < processes.size(); r++) {
            try {
                sb.append("\n--- rank ").append(r).append(" stdout:\n").append(Files.readString(out.get(r)))
                        .append("\n--- rank ").append(r).append(" stderr:\n").append(Files.readString(err.get(r)));
            } catch (IOException e) {
                sb.append("\n--- rank ").append(r).append(": ").append(e);
            }
        }
        return sb.toString();
    }

    @Override
    public void close() {
        for (Process p : processes) {
            p.destroyForcibly();
        }
    }
}
