package io.flexlink.bench;

import com.google.gson.GsonBuilder;
import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import com.google.gson.JsonPrimitive;
import io.flexlink.CommStats;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.config.Setting;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * --json FILE: every row with all its columns, the environment (backend, ranks, devices, versions,
 * topology as the backend reports it, configuration) and each path's totals from
 * {@link io.flexlink.Communicator#stats()}. Field names follow nccl-tests' own JSON output where it has
 * one ({@code config}, {@code results} with {@code out_of_place}/{@code in_place}, {@code *_per_iter},
 * {@code out_of_bounds}, {@code average_bus_bandwidth}). Numbers that are not finite are written as null.
 */
final class JsonReport {
    private JsonReport() {
    }

    static void write(Path file, PerfOptions o, Sweep.RunParts p, List<Row> rows, Row.Basis basis, ResultTable table,
                      Gate gate, boolean gatePassed) throws IOException {
        RunEnv env = p.env;
        JsonObject doc = new JsonObject();
        doc.addProperty("tool", "flexlink-perf");
        doc.addProperty("collective", o.collective.testName());
        JsonObject versions = new JsonObject();
        versions.addProperty("flexlink", RunEnv.flexlinkVersion());
        versions.addProperty("nccl_tests_compatible", PerfHeader.NCCL_TESTS_VERSION);
        versions.addProperty("java", RunEnv.javaVersion());
        versions.addProperty("os", System.getProperty("os.name") + " " + System.getProperty("os.arch"));
        versions.addProperty("primary_transport", env.facts.primaryTransport);
        versions.add("backend_libraries", string(env.facts.topology == null ? null : env.facts.topology.libraryVersion()));
        doc.add("versions", versions);
        doc.add("environment", environment(env, o.layout));
        doc.add("split", split(o.layout));
        doc.add("topology", env.facts.json());
        // what vs, the gate and the plot compare: busbw, or algbw where busbw is 0 (one rank)
        doc.addProperty("vs_basis", basis.label());
        doc.add("baseline", baseline(p));
        doc.add("registration", registration(p.registration));
        doc.add("config", options(o));
        doc.add("settings", settings(env.config));
        JsonArray aux = new JsonArray();
        p.meter.auxPaths().forEach(aux::add);
        doc.add("aux_paths", aux);
        JsonArray results = new JsonArray();
        for (Row r : rows) {
            results.add(row(r, p.meter.auxPaths()));
        }
        doc.add("results", results);
        JsonObject totals = new JsonObject();
        totals.add("flexlink", totals(p.meter, p.flex.communicators()));
        doc.add("path_totals", totals);
        JsonObject oob = new JsonObject();
        oob.addProperty("count", table.failedRuns());
        oob.addProperty("wrong_elements", table.wrong());
        oob.addProperty("okay", table.failedRuns() == 0);
        doc.add("out_of_bounds", oob);
        JsonObject avg = new JsonObject();
        avg.add("bandwidth", number(table.averageBusBw()));
        avg.add("okay", Double.isNaN(o.minAverageBusBw) ? new JsonPrimitive("unchecked")
                : new JsonPrimitive(table.averagePasses(o.minAverageBusBw)));
        doc.add("average_bus_bandwidth", avg);
        if (gate != null) {
            JsonObject g = new JsonObject();
            g.add("min", number(gate.min));
            g.add("large", number(gate.large));
            g.addProperty("passed", gatePassed);
            JsonArray failures = new JsonArray();
            gate.failures().forEach(failures::add);
            g.add("failures", failures);
            doc.add("gate", g);
        }
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        String text = new GsonBuilder().setPrettyPrinting().serializeNulls().disableHtmlEscaping().create().toJson(doc);
        Files.write(file, (text + "\n").getBytes(StandardCharsets.UTF_8));
    }

    /** A number, or null where it is not finite (JSON has no NaN). */
    static JsonElement number(double v) {
        return Double.isFinite(v) ? new JsonPrimitive(v) : JsonNull.INSTANCE;
    }

    static JsonElement string(String s) {
        return s == null ? JsonNull.INSTANCE : new JsonPrimitive(s);
    }

    /** NCCL_TESTS_SPLIT: the variable, the rule, and the sub-communicators' count and size; null without one. */
    private static JsonElement split(RankLayout l) {
        if (l.split == null) {
            return JsonNull.INSTANCE;
        }
        JsonObject s = new JsonObject();
        s.addProperty("variable", l.split.variable);
        s.addProperty("value", l.split.text);
        s.addProperty("rule", l.split.rule());
        s.addProperty("communicators", l.groups());
        s.addProperty("comm_size", l.commSize());
        return s;
    }

    private static JsonObject environment(RunEnv env, RankLayout layout) {
        JsonObject e = new JsonObject();
        e.addProperty("backend", env.backend);
        e.addProperty("backend_note", env.backendNote);
        e.add("backend_detail", string(env.backendDetail));
        e.addProperty("backend_description", env.backendDescription);
        e.addProperty("device_count", env.deviceCount);
        e.addProperty("ranks", env.devices.length);
        e.addProperty("host", env.host);
        e.addProperty("pid", env.pid);
        JsonArray devices = new JsonArray();
        for (int r = 0; r < env.devices.length; r++) {
            JsonObject d = new JsonObject();
            d.addProperty("rank", r);
            d.addProperty("group", layout.color(r));
            d.addProperty("device", env.devices[r]);
            d.addProperty("backend", env.backend);
            io.flexlink.topo.GpuInfo g = env.facts.gpu(env.devices[r]);
            if (g != null) {
                d.addProperty("model", g.model());
                d.addProperty("pci_bus_id", g.pciBusId());
            }
            devices.add(d);
        }
        e.add("devices", devices);
        return e;
    }

    private static JsonObject baseline(Sweep.RunParts p) {
        JsonObject b = new JsonObject();
        b.add("raw", string(p.baselines.raw == null ? null : p.baselines.raw.label()));
        b.add("primary_only", string(p.baselines.primaryOnly == null ? null : p.baselines.primaryOnly.label()));
        b.add("missing", string(p.baselines.missing));
        return b;
    }

    /** -R 1: per target, the buffers registered and how many NCCL holds too; null without -R. */
    private static JsonElement registration(LocalRegistration reg) {
        if (reg == null) {
            return JsonNull.INSTANCE;
        }
        JsonArray a = new JsonArray();
        for (LocalRegistration.Part part : reg.parts) {
            JsonObject t = new JsonObject();
            t.addProperty("target", part.target);
            t.addProperty("buffers", part.buffers);
            t.addProperty("with_nccl", part.withTransport);
            a.add(t);
        }
        return a;
    }

    private static JsonObject options(PerfOptions o) {
        JsonObject c = new JsonObject();
        c.addProperty("nthreads", o.threads);
        c.addProperty("ngpus", o.ranksPerThread);
        c.addProperty("minimum_bytes", o.minBytes);
        c.addProperty("maximum_bytes", o.maxBytes);
        if (o.stepFactor > 1) {
            c.addProperty("step_factor", o.stepFactor);
        } else {
            c.addProperty("step_bytes", o.stepBytes);
        }
        c.addProperty("warmup_iters", o.warmup);
        c.addProperty("iterations", o.iters);
        c.addProperty("aggregated_iterations", o.aggIters);
        c.addProperty("run_cycles", o.cycles);
        c.addProperty("validation", o.check);
        c.addProperty("graph", o.graphLaunches);
        c.addProperty("blocking_collectives", o.blocking != 0);
        c.addProperty("blocking_mode", o.blocking);
        c.addProperty("average", o.average);
        c.addProperty("per_iter_timing", o.perIter == 1);
        c.addProperty("per_iter_skip", o.perIterSkip);
        c.addProperty("timeout", o.timeout);
        c.addProperty("unalign", o.unalign);
        c.addProperty("local_register", o.register);
        c.addProperty("root", o.root);
        c.addProperty("seed", o.flex.seed);
        c.addProperty("baseline", o.flex.baseline);
        return c;
    }

    private static JsonObject settings(FlexLinkConfig config) {
        JsonObject s = new JsonObject();
        for (Setting<?> setting : FlexLinkConfig.settings()) {
            String v = config.raw(setting);
            s.addProperty(setting.property(), setting == FlexLinkConfig.SECRET && !v.isEmpty() ? "(set, not shown)" : v);
        }
        return s;
    }

    private static JsonObject row(Row r, List<String> auxPaths) {
        JsonObject o = new JsonObject();
        o.addProperty("size", r.bytes);
        o.addProperty("count", r.count);
        o.addProperty("type", r.type.ncclName());
        o.addProperty("redop", r.opName());
        o.addProperty("root", r.root);
        o.addProperty("cycle", r.cycle);
        o.add("out_of_place", run(r.outOfPlace));
        perIter(o, "out_of_place_per_iter", r.outOfPlace);
        o.add("in_place", run(r.inPlace));
        perIter(o, "in_place_per_iter", r.inPlace);
        JsonObject shares = new JsonObject();
        for (int i = 0; i < auxPaths.size(); i++) {
            shares.add(auxPaths.get(i), number(i < r.shares.length ? r.shares[i] : 0));
        }
        o.add("shares", shares);
        if (r.baseline != null) {
            o.add("baseline", run(r.baseline));
            o.add("vs", number(r.vs()));
        }
        if (r.primaryOnly != null) {
            o.add("primary_only", run(r.primaryOnly));
            o.add("prim", number(r.primaryVs()));
        }
        return o;
    }

    private static JsonElement run(Row.Run run) {
        if (run == null) {
            return JsonNull.INSTANCE;
        }
        JsonObject o = new JsonObject();
        o.add(run.cpuTime ? "cpu_time" : "time", number(run.timeUs)); // nccl-tests' key with -C 1
        o.add("alg_bw", number(run.algBw));
        o.add("bus_bw", number(run.busBw));
        o.add("nwrong", run.wrong < 0 ? JsonNull.INSTANCE : new JsonPrimitive(run.wrong));
        return o;
    }

    /** nccl-tests' per-iteration object of -I: the statistics and every iteration's time. */
    private static void perIter(JsonObject row, String key, Row.Run run) {
        IterStats s = run == null ? null : run.iterations;
        if (s == null) {
            return;
        }
        JsonObject o = new JsonObject();
        o.addProperty("skipped_iterations", s.skipped);
        o.add("min_us", number(s.min * 1e6));
        o.add("max_us", number(s.max * 1e6));
        o.add("avg_us", number(s.mean * 1e6));
        o.add("p50_us", number(s.p50 * 1e6));
        o.add("p95_us", number(s.p95 * 1e6));
        o.add("p99_us", number(s.p99 * 1e6));
        o.add("stdev_us", number(s.stdev * 1e6));
        o.add("cv_pct", number(s.cvPercent()));
        JsonArray times = new JsonArray();
        for (double t : s.times) {
            times.add(number(t * 1e6));
        }
        o.add("times_us", times);
        row.add(key, o);
    }

    /** Per local rank: its communicator (the sub-communicator with a split) and what each path carried on it. */
    private static JsonArray totals(ShareMeter meter, io.flexlink.Communicator[] comms) {
        JsonArray ranks = new JsonArray();
        List<List<CommStats.PathTotals>> perRank = meter.perRank();
        for (int r = 0; r < perRank.size(); r++) {
            JsonObject rank = new JsonObject();
            rank.addProperty("rank", r);
            rank.addProperty("comm_rank", comms[r].rank());
            rank.addProperty("comm_size", comms[r].size());
            JsonArray paths = new JsonArray();
            for (CommStats.PathTotals t : perRank.get(r)) {
                JsonObject p = new JsonObject();
                p.addProperty("path", t.path());
                p.addProperty("calls", t.calls());
                p.addProperty("bytes", t.bytes());
                p.add("seconds", number(t.seconds()));
                p.addProperty("timed_calls", t.timedCalls());
                paths.add(p);
            }
            rank.add("paths", paths);
            ranks.add(rank);
        }
        return ranks;
    }
}
