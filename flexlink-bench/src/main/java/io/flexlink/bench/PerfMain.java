package io.flexlink.bench;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import java.io.IOException;
import java.io.PrintStream;
import java.io.PrintWriter;
import picocli.CommandLine;

/**
 * flexlink-perf: {@code java -jar flexlink-perf.jar all_reduce -b 1K -e 64M -f 4 -g 4 [options]}. Prints
 * nccl-tests' table for FlexLink's collectives. {@link #run} never exits the JVM, so tests call it in
 * process; only {@link #main} does.
 */
public final class PerfMain {
    /** Every row correct (and the gate, if any, passed). */
    public static final int EXIT_OK = 0;
    /** A wrong element or a failed collective. */
    public static final int EXIT_FAILED = 1;
    /** A usage error: bad option, unknown collective or type, a backend that is not there, a feature FlexLink lacks. */
    public static final int EXIT_USAGE = 2;
    /** --gate or NCCL_TESTS_MIN_BW failed. */
    public static final int EXIT_GATE = 3;

    private static final String NAME = "flexlink-perf";

    private PerfMain() {
    }

    public static void main(String[] args) {
        System.setProperty("java.awt.headless", "true");
        int code = run(args, System.out, System.err);
        System.out.flush();
        System.err.flush();
        System.exit(code);
    }

    /**
     * Parses {@code args}, runs the sweep, prints the table on {@code out} and problems on {@code err}
     * (usage errors in one line, no stack trace), and returns the exit code.
     */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        return run(args, out, err, System.getenv());
    }

    /** {@link #run(String[], PrintStream, PrintStream)} with the environment --from-env reads. */
    static int run(String[] args, PrintStream out, PrintStream err, java.util.Map<String, String> environment) {
        return run(args, out, err, environment, null);
    }

    /** ... with a test hook that may change each checked call's outputs before they are compared. */
    static int run(String[] args, PrintStream out, PrintStream err, java.util.Map<String, String> environment,
                   DataCheck.Tamper tamper) {
        configureLogging(args);
        PerfOptions options = new PerfOptions();
        options.environment = environment;
        CommandLine cl = new CommandLine(options);
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        try {
            cl.parseArgs(args);
        } catch (CommandLine.ParameterException e) {
            err.println(NAME + ": " + oneLine(e.getMessage()) + " (see --help)");
            return EXIT_USAGE;
        }
        if (cl.isUsageHelpRequested()) {
            cl.usage(out);
            return EXIT_OK;
        }
        if (cl.isVersionHelpRequested()) {
            cl.printVersionHelp(out);
            return EXIT_OK;
        }
        try {
            if (options.flex.replot != null) {
                if (options.flex.plot == null) {
                    err.println(NAME + ": --replot needs --plot FILE.png");
                    return EXIT_USAGE;
                }
                OptionChecks.writable("--plot", options.flex.plot);
                Replot.replot(options.flex.replot, options.flex.plot);
                return EXIT_OK;
            }
            OptionChecks.validate(options);
            // with --from-env only rank 0 prints the table; the others report problems on stderr
            PrintStream table = options.printsTable() ? out : new PrintStream(java.io.OutputStream.nullOutputStream());
            return new PerfRunner(options, table, err, tamper, Progress.forStderr(err)).run();
        } catch (StreamWait.Timeout e) {
            out.flush();
            err.println(NAME + ": " + e.getMessage() + "; every communicator was aborted");
            return EXIT_FAILED;
        } catch (FlexLinkException e) {
            out.flush();
            if (e.result() == Result.INVALID_ARGUMENT) {
                err.println(NAME + ": " + oneLine(e.detail()));
                return EXIT_USAGE;
            }
            err.println(NAME + ": " + oneLine(e.getMessage()));
            return EXIT_FAILED;
        } catch (IOException e) {
            out.flush();
            err.println(NAME + ": cannot write output: " + oneLine(String.valueOf(e.getMessage())));
            return EXIT_FAILED;
        } catch (RuntimeException | OutOfMemoryError | LinkageError e) {
            out.flush();
            err.println(NAME + ": " + oneLine(e.toString()));
            return EXIT_FAILED;
        }
    }

    /**
     * slf4j-simple reads its levels when FlexLink's loggers are first made, so this runs before anything
     * touches FlexLink: WARN by default (also set by simplelogger.properties), INFO for FlexLink with -v.
     */
    static void configureLogging(String[] args) {
        for (String a : args) {
            if (a.equals("-v") || a.equals("--verbose")) {
                if (System.getProperty("org.slf4j.simpleLogger.log.io.flexlink") == null) {
                    System.setProperty("org.slf4j.simpleLogger.log.io.flexlink", "info");
                }
            }
        }
        if (System.getProperty("org.slf4j.simpleLogger.logFile") == null) {
            System.setProperty("org.slf4j.simpleLogger.logFile", "System.err");
        }
    }

    private static String oneLine(String s) {
        return s == null ? "" : s.replaceAll("\\s*[\\r\\n]+\\s*", " ").trim();
    }
}
