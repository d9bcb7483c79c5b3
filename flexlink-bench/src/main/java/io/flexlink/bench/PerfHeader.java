package io.flexlink.bench;

import io.flexlink.config.FlexLinkConfig;
import java.io.PrintStream;
import java.util.Locale;

/**
 * The header, in nccl-tests 2.19's order and wording: the version line (FlexLink's, and the NCCL library
 * underneath as nccl-tests' {@code nccl-library=} code), the program, the {@code nThread ... unalign:}
 * line, the blocking and per-iteration notes; then FlexLink's own lines (backend, topology, paths,
 * baseline, NCCL_TESTS_SPLIT); then {@code # Using devices} with one line per rank, its Group the color of its
 * sub-communicator (0 without a split), as nccl-tests prints it.
 */
final class PerfHeader {
    /** The nccl-tests release whose options and output flexlink-perf follows. */
    static final String NCCL_TESTS_VERSION = "2.19.6";

    private PerfHeader() {
    }

    static void print(PrintStream out, PerfOptions o, Sweep.RunParts p) {
        RunEnv env = p.env;
        out.printf(Locale.ROOT, "# flexlink-perf version %s (nccl-tests %s compatible) nccl-library=%s java=%s%n",
                RunEnv.flexlinkVersion(), NCCL_TESTS_VERSION, env.facts.ncclLibraryCode(),
                System.getProperty("java.version"));
        out.println("# Collective test starting: " + o.collective.programName());
        out.printf(Locale.ROOT, "# nThread %d nGpus %d minBytes %d maxBytes %d step: %s warmup iters: %d iters: %d "
                        + "agg iters: %d validation: %d graph: %d unalign: %d%n",
                o.threads, o.ranksPerThread, o.minBytes, o.maxBytes, o.stepText(), o.warmup, o.iters, o.aggIters,
                o.check, o.graphLaunches, o.unalign);
        if (o.blocking == 1) {
            out.println("# Blocking Enabled: wait and barrier after each inner iteration (-m) ");
        } else if (o.blocking == 2) {
            out.println("# Blocking Enabled: wait after each inner iteration (-m), no barrier ");
        } else if (o.blocking == 3) {
            out.println("# Blocking Enabled: wait and barrier after each outer iteration (-n); time excludes barrier ");
        }
        if (p.registration != null) {
            // nccl-tests prints nothing for -R; this line is in the style of its "Enabled" notes
            out.println("# Local Registration Enabled (-R 1): " + p.registration.note() + " ");
        }
        if (o.perIter == 1) {
            out.println("# Per-Iteration Report: " + (env.backend.equals("cuda") ? "CUDA" : "stream") + " event timing; "
                    + "i_* uses max over process rows" + (o.perIterSkip > 0 ? "; summary skips first " + o.perIterSkip
                    + " iterations" : "") + " ");
        }
        out.println("# Backend: " + env.backend + " (" + env.backendNote + ")");
        out.println(env.facts.headerLine());
        FlexLinkConfig c = env.config;
        // auto chunk and slots: sized per communicator (docs/design.md), so the header names the setting
        out.printf(Locale.ROOT, "# FlexLink: paths %s (primary %s), auxiliary %s, share %s, chunk %s, slots %s, "
                        + "min split %d B%n",
                String.join(",", c.paths()), p.meter.hasPrimary() ? "on" : "off", p.meter.auxPaths(),
                c.raw(FlexLinkConfig.SHARE), c.isAuto(FlexLinkConfig.CHUNK_BYTES) ? "auto" : c.chunkBytes() + " B",
                c.isAuto(FlexLinkConfig.SLOTS) ? "auto" : String.valueOf(c.slots()), c.minSplitBytes());
        out.println(NodeReport.header(p.flex.communicators()[0]));
        if (o.flex.baseline) {
            out.println("# Baseline: " + baselineNote(o, p));
        }
        if (o.layout.split != null) {
            out.println("# Split: " + splitNote(o.layout));
        }
        out.println("#");
        out.println("# Using devices");
        for (int r = 0; r < env.devices.length; r++) {
            out.printf(Locale.ROOT, "#  Rank %2d Group %2d Pid %6d on %10s device %2d %s%n",
                    r, o.layout.color(r), env.pid(r), env.host, env.devices[r], env.facts.deviceLabel(env.devices[r]));
        }
        out.flush();
    }

    /** What NCCL_TESTS_SPLIT made of the job, and which columns are per sub-communicator (nccl-tests' README). */
    static String splitNote(RankLayout l) {
        TestsSplit s = l.split;
        int n = l.commSize();
        return String.format(Locale.ROOT, "%s (%s): %d sub-communicator%s of %d rank%s (Group = color), all running "
                        + "each call at the same time; size, count, algbw and busbw are one sub-communicator's (n = %d), "
                        + "time and #wrong are over all %d ranks", s.setting(), s.rule(), l.groups(),
                l.groups() == 1 ? "" : "s", n, n == 1 ? "" : "s", n, l.worldSize());
    }

    private static String baselineNote(PerfOptions o, Sweep.RunParts p) {
        Baselines b = p.baselines;
        StringBuilder sb = new StringBuilder();
        if (b.raw != null) {
            Row.Basis basis = Row.Basis.of(o.collective, o.commSize());
            sb.append(b.raw.label()).append(" on the same buffers and streams, alternating with FlexLink out of "
                    + "place; vs = FlexLink ").append(basis.label()).append(" / baseline ").append(basis.label());
            if (b.primaryOnly != null) {
                sb.append("; prim = FlexLink with its primary path alone (flexlink.paths=primary) / baseline");
            }
            if (basis == Row.Basis.ALGBW) {
                sb.append(" (busbw is 0 on one rank; the algbw ratio is the baseline's time over FlexLink's)");
            }
        } else {
            sb.append("skipped");
        }
        if (b.missing != null) {
            sb.append(" (").append(b.missing).append(')');
        }
        return sb.toString();
    }
}
