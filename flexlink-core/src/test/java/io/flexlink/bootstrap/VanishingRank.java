package io.flexlink.bootstrap;

import io.flexlink.UniqueId;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.RankExchange;
import io.flexlink.testing.ProcessJob;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One rank of a TCP rendezvous in a JVM of its own, which the test kills: the kernel closes its
 * connections without a goodbye, exactly as when a rank's process dies. {@code root N}: listens on
 * loopback, prints {@code ID <base64>}, joins as rank 0 of N; {@code peer ID N RANK}: joins with the id.
 * Either prints {@code READY} once joined and then waits to be killed.
 */
final class VanishingRank implements AutoCloseable {
    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private final Process process;
    private final BufferedReader out;

    private VanishingRank(String... args) throws IOException {
        String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        ProcessBuilder pb = new ProcessBuilder(javaBin, "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp",
                ProcessJob.classPath(), VanishingRank.class.getName());
        pb.command().addAll(List.of(args));
        pb.redirectError(ProcessBuilder.Redirect.DISCARD);
        process = pb.start();
        out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    }

    /** Rank 0 of {@code n} in a process of its own; {@link #line} gives its id first. */
    static VanishingRank root(int n) throws IOException {
        return new VanishingRank("root", Integer.toString(n));
    }

    /** Rank {@code rank} of {@code n} in a process of its own, joining {@code id}. */
    static VanishingRank peer(UniqueId id, int n, int rank) throws IOException {
        return new VanishingRank("peer", id.toBase64(), Integer.toString(n), Integer.toString(rank));
    }

    /** The next line the process printed (its id, then READY once joined); null when it ended. */
    String line() throws IOException {
        return out.readLine();
    }

    /** Kills the process as a crash would: no goodbye on its connections. */
    void vanish() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
    }

    @Override
    public void close() throws InterruptedException {
        vanish();
    }

    public static void main(String[] args) throws Exception {
        PrintStream o = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        RankExchange joined;
        if (args[0].equals("root")) {
            UniqueId id = TcpRendezvous.listen(InetAddress.getLoopbackAddress(), 0, FlexLinkConfig.builder().build());
            o.println("ID " + id.toBase64());
            joined = TcpRendezvous.join(id, Integer.parseInt(args[1]), 0, TIMEOUT);
        } else {
            joined = TcpRendezvous.join(UniqueId.fromBase64(args[1]), Integer.parseInt(args[2]),
                    Integer.parseInt(args[3]), TIMEOUT);
        }
        o.println("READY");
        joined.allGather(new byte[] {1}); // the test's first round, with every rank
        Thread.sleep(TimeUnit.MINUTES.toMillis(5)); // until killed
    }
}
