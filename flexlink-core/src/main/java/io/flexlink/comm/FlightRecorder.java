package io.flexlink.comm;

import io.flexlink.config.FlexLinkConfig;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where the watchdog puts a communicator's flight record ({@link CallWatch#flightRecord}) when it aborts
 * it: the log (one WARN message) and a file per rank and process, {@code <prefix>-<pid>-rank<r>.txt},
 * appended to, so that several communicators of one process keep every record. The prefix is
 * {@code flexlink.flightRecorder}; {@code off} keeps it to the log.
 */
final class FlightRecorder {
    private static final Logger LOG = LoggerFactory.getLogger(FlightRecorder.class);
    /** Done calls shown before the oldest unfinished one. */
    static final int BEFORE = 8;
    /** Calls shown after it (then the newest). */
    static final int AFTER = 16;

    private final Supplier<String> prefix;

    /** {@code prefix} gives the setting's text each time a record is written ({@code off}: log only). */
    FlightRecorder(Supplier<String> prefix) {
        this.prefix = prefix;
    }

    /**
     * The process's recorder: the watchdog is one thread per process, so its files follow the process's
     * system property or environment variable, read when a record is written.
     */
    static FlightRecorder ofProcess() {
        return new FlightRecorder(() -> FlexLinkConfig.fromEnvironment().raw(FlexLinkConfig.FLIGHT_RECORDER));
    }

    /** The file rank {@code rank} of this process writes to, or null when the recorder writes only the log. */
    Path file(int rank) {
        String p = prefix.get().trim();
        if (p.isEmpty() || p.equalsIgnoreCase("off")) {
            return null;
        }
        return Path.of(p + "-" + ProcessHandle.current().pid() + "-rank" + rank + ".txt");
    }

    /** Writes {@code record} of {@code comm} (why: {@code reason}) to the log and the rank's file. */
    void write(int rank, int size, String comm, String reason, String record) {
        String text = "== FlexLink flight recorder: rank " + rank + "/" + size + ", " + comm + ", " + Instant.now()
                + "\n" + reason + "\n" + record;
        Path file = null;
        String where;
        try {
            file = file(rank);
            if (file != null) {
                Files.writeString(file, text + "\n", StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                        StandardOpenOption.APPEND, StandardOpenOption.WRITE);
            }
            where = file == null ? "" : " (also in " + file + ")";
        } catch (IOException | InvalidPathException | SecurityException e) {
            where = " (not written to " + (file == null ? "flexlink.flightRecorder" : file) + ": " + e + ")";
        }
        LOG.warn("rank {}/{}: watchdog flight recorder{}:\n{}", rank, size, where, text);
    }
}
