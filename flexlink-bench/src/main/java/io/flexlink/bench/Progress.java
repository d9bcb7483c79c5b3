package io.flexlink.bench;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.LongSupplier;

/**
 * One progress line on stderr ({@code # [12/40] float sum 1048576 B}), rewritten in place with
 * {@code \r}, for runs that last: it appears only once the run is {@link #DELAY_NANOS} old, and never
 * when stderr is not a terminal (a pipe, a file, a test's stream), so logs and CI output stay clean.
 */
final class Progress {
    /** Runs shorter than this print no progress at all. */
    static final long DELAY_NANOS = 3_000_000_000L;

    private final PrintStream err;
    private final boolean on;
    private final LongSupplier clock;
    private final long start;
    private int width;

    /** {@code terminal}: whether {@code err} is a terminal; {@code clock}: nanoseconds (System::nanoTime). */
    Progress(PrintStream err, boolean terminal, LongSupplier clock) {
        this.err = err;
        this.on = terminal;
        this.clock = clock;
        this.start = clock.getAsLong();
    }

    /** Progress on the process's stderr, shown only when that is a terminal. */
    static Progress forStderr(PrintStream err) {
        return new Progress(err, err == System.err && stderrIsTerminal(), System::nanoTime);
    }

    /**
     * Whether file descriptor 2 is a terminal: on Linux what it links to ({@code /dev/pts/N}, {@code /dev/ttyN});
     * elsewhere whether the JVM has a console at all.
     */
    static boolean stderrIsTerminal() {
        Path fd = Path.of("/proc/self/fd/2");
        try {
            if (Files.isSymbolicLink(fd)) {
                String target = Files.readSymbolicLink(fd).toString();
                return target.startsWith("/dev/pts/") || target.startsWith("/dev/tty");
            }
        } catch (java.io.IOException | SecurityException | UnsupportedOperationException e) {
            // fall through to the console test
        }
        return System.console() != null;
    }

    void update(long done, long total, String what) {
        if (!on || total <= 1 || clock.getAsLong() - start < DELAY_NANOS) {
            return;
        }
        String line = "# [" + done + "/" + total + "] " + what;
        StringBuilder sb = new StringBuilder("\r").append(line);
        for (int i = line.length(); i < width; i++) {
            sb.append(' ');
        }
        width = line.length();
        err.print(sb);
        err.flush();
    }

    /** Erases the line (before a table row is printed, and at the end). */
    void clear() {
        if (width == 0) {
            return;
        }
        err.print("\r" + " ".repeat(width) + "\r");
        err.flush();
        width = 0;
    }
}
