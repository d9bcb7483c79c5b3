package io.flexlink.bench;

import java.io.PrintStream;

/** A one-line progress indicator on stderr, rewritten with {@code \r}; silent unless a console is attached. */
final class Progress {
    private final PrintStream err;
    private final int total;
    private final boolean on;
    private int width;

    Progress(PrintStream err, int total) {
        this.err = err;
        this.total = total;
        this.on = System.console() != null && total > 1;
    }

    void update(int done, String what) {
        if (!on) {
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
        if (!on || width == 0) {
            return;
        }
        err.print("\r" + " ".repeat(width) + "\r");
        err.flush();
        width = 0;
    }
}
