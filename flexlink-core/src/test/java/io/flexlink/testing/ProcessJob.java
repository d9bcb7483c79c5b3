package io.flexlink.testing;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A multi-process job for tests: N JVMs running a main class of the test class path, one rank each,
 * with torchrun's variables on loopback and a free port. Each child's stdout lines are collected by a
 * reader thread (its stderr goes to a file), and a latch opens when a child prints a given line.
 */
public final class ProcessJob implements AutoCloseable {
    private final List<Process> processes = new ArrayList<>();
    private final List<List<String>> lines = new ArrayList<>();
    private final List<Path> stderr = new ArrayList<>();
    private final List<Thread> readers = new ArrayList<>();
    private final int size;
    private final String readyLine;
    // guarded by this: ranks that printed the ready line, ranks whose output ended
    private int ready;
    private int ended;
    private final int port;

    /**
     * Starts {@code n} ranks of {@code mainClass args} with {@code env} added to torchrun's variables
     * ({@code perRank} overrides per rank may be null); {@code readyLine} is what the ready latch waits for.
     */
    public ProcessJob(int n, String mainClass, List<String> args, Map<String, String> env,
                      List<Map<String, String>> perRank, String readyLine, Path logDir) throws IOException {
        // small heaps and a quick JIT: the children of a test start fast on two cores
        this(n, List.of("-Xmx1g", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"), mainClass, args, env, perRank,
                readyLine, logDir);
    }

    /** Like the other constructor, with the children's JVM options. */
    public ProcessJob(int n, List<String> jvmOptions, String mainClass, List<String> args, Map<String, String> env,
                      List<Map<String, String>> perRank, String readyLine, Path logDir) throws IOException {
        this.port = freePort();
        this.readyLine = readyLine;
        this.size = n;
        String cp = classPath();
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        for (int r = 0; r < n; r++) {
            List<String> cmd = new ArrayList<>(List.of(java));
            cmd.addAll(jvmOptions);
            cmd.addAll(List.of("-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", cp, mainClass));
            cmd.addAll(args);
            ProcessBuilder pb = new ProcessBuilder(cmd);
            Map<String, String> e = pb.environment();
            e.putAll(env);
            e.put("RANK", String.valueOf(r));
            e.put("WORLD_SIZE", String.valueOf(n));
            e.put("LOCAL_RANK", String.valueOf(r));
            e.put("LOCAL_WORLD_SIZE", String.valueOf(n));
            e.put("MASTER_ADDR", "127.0.0.1");
            e.put("MASTER_PORT", String.valueOf(port));
            if (perRank != null && perRank.get(r) != null) {
                e.putAll(perRank.get(r));
            }
            Path err = logDir.resolve("rank" + r + ".stderr");
            stderr.add(err);
            pb.redirectError(err.toFile());
            Process p = pb.start();
            processes.add(p);
            List<String> out = new CopyOnWriteArrayList<>();
            lines.add(out);
            Thread t = new Thread(() -> collect(p, out), "rank" + r + "-stdout");
            t.setDaemon(true);
            t.start();
            readers.add(t);
        }
    }

    private void collect(Process p, List<String> out) {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                out.add(line);
                if (line.equals(readyLine)) {
                    synchronized (this) {
                        ready++;
                        notifyAll();
                    }
                }
            }
        } catch (IOException e) {
            out.add("READ-FAILED " + e);
        }
        synchronized (this) {
            ended++;
            notifyAll();
        }
    }

    /**
     * The test class path: surefire's (its forked JVM runs from a manifest-only jar), or the URLs of the
     * loader of the test classes (the JUnit console launcher loads them with one), or java.class.path.
     */
    public static String classPath() {
        String cp = System.getProperty("surefire.test.class.path");
        if (cp != null) {
            return cp;
        }
        StringBuilder sb = new StringBuilder(System.getProperty("java.class.path"));
        for (ClassLoader l = ProcessJob.class.getClassLoader(); l != null; l = l.getParent()) {
            if (l instanceof java.net.URLClassLoader) {
                for (java.net.URL u : ((java.net.URLClassLoader) l).getURLs()) {
                    try {
                        sb.append(java.io.File.pathSeparator).append(Path.of(u.toURI()));
                    } catch (java.net.URISyntaxException | IllegalArgumentException e) {
                        // not a file: the child cannot use it anyway
                    }
                }
            }
        }
        return sb.toString();
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    public int port() {
        return port;
    }

    public Process process(int rank) {
        return processes.get(rank);
    }

    /** Waits until every rank printed the ready line; false on timeout or when a rank ended first. */
    public synchronized boolean awaitReady(long seconds) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (ready < size && ended == 0) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            TimeUnit.NANOSECONDS.timedWait(this, left);
        }
        return ready == size;
    }

    /** Waits for rank {@code r} to exit and its output to be read; returns its exit code, or -1 on timeout. */
    public int awaitExit(int r, long seconds) throws InterruptedException {
        Process p = processes.get(r);
        if (!p.waitFor(seconds, TimeUnit.SECONDS)) {
            return -1;
        }
        readers.get(r).join(TimeUnit.SECONDS.toMillis(seconds));
        return p.exitValue();
    }

    public List<String> output(int r) {
        return lines.get(r);
    }

    /** The first stdout line of rank {@code r} starting with {@code prefix}, or null. */
    public String line(int r, String prefix) {
        for (String l : lines.get(r)) {
            if (l.startsWith(prefix)) {
                return l;
            }
        }
        return null;
    }

    public String stderr(int r) {
        try {
            return Files.readString(stderr.get(r));
        } catch (IOException e) {
            return "(no stderr: " + e + ")";
        }
    }

    /** Everything each rank said, for assertion messages. */
    public String describe() {
        StringBuilder sb = new StringBuilder();
        for (int r = 0; r < processes.size(); r++) {
            sb.append("\n--- rank ").append(r).append(" stdout:\n").append(String.join("\n", lines.get(r)))
                    .append("\n--- rank ").append(r).append(" stderr:\n").append(stderr(r));
        }
        return sb.toString();
    }

    /** Shared-memory files in {@code dir} that a process of this job created and that are still there. */
    public List<Path> leftoverShm(Path dir) throws IOException {
        List<Path> out = new ArrayList<>();
        String uid = String.valueOf(Files.getAttribute(Path.of("/proc/self"), "unix:uid"));
        for (Process p : processes) {
            String prefix = "flexlink-" + uid + "-" + p.pid() + "-";
            try (Stream<Path> files = Files.list(dir)) {
                files.filter(f -> f.getFileName().toString().startsWith(prefix)).forEach(out::add);
            }
        }
        return out;
    }

    /** The environment of the host backend with FlexLink's multi-process test settings. */
    public static Map<String, String> hostEnv(String initTimeout) {
        Map<String, String> env = new HashMap<>();
        env.put("FLEXLINK_BACKEND", "host");
        env.put("FLEXLINK_PATHS", "primary,pcie");
        env.put("FLEXLINK_SHARE", "pcie=0.3");
        env.put("FLEXLINK_CHUNK_BYTES", "64K");
        env.put("FLEXLINK_MIN_SPLIT_BYTES", "0");
        env.put("FLEXLINK_TUNING_CACHE", "off");
        env.put("FLEXLINK_INIT_TIMEOUT", initTimeout);
        return env;
    }

    @Override
    public void close() {
        for (Process p : processes) {
            p.destroyForcibly();
        }
    }
}
