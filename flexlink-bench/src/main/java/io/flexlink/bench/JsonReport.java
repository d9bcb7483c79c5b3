package io.flexlink.bench;

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
 * {@link io.flexlink.Communicator#stats()}. Written by hand (no JSON library). Field names follow
 * nccl-tests' own JSON output where it has one.
 */
final class JsonReport {
    private JsonReport() {
    }

    static void write(Path file, PerfOptions o, RunEnv env, List<String> auxPaths, List<Row> rows, Row.Basis basis,
                      ShareMeter flex, ShareMeter base, ResultTable table, Gate gate, boolean gatePassed)
            throws IOException {
        JsonWriter w = new JsonWriter();
        w.beginObject();
        w.field("tool", "flexlink-perf");
        w.field("collective", o.collective.testName());
        w.key("versions").beginObject()
                .field("flexlink", RunEnv.flexlinkVersion())
                .field("java", RunEnv.javaVersion())
                .field("os", System.getProperty("os.name") + " " + System.getProperty("os.arch"))
                .field("primary_transport", env.facts.primaryTransport)
                .field("backend_libraries", env.facts.topology == null ? null : env.facts.topology.libraryVersion())
                .endObject();
        environment(w, env);
        env.facts.write(w);
        // what vs, the gate and the plot compare: busbw, or algbw where busbw is 0 (one rank)
        w.field("vs_basis", basis.label());
        options(w, o);
        settings(w, env.config);
        w.key("aux_paths").beginArray();
        for (String p : auxPaths) {
            w.value(p);
        }
        w.endArray();
        w.key("results").beginArray();
        for (Row r : rows) {
            row(w, r, auxPaths);
        }
        w.endArray();
        w.key("path_totals").beginObject();
        totals(w, "flexlink", flex);
        if (base != null) {
            totals(w, "baseline", base);
        }
        w.endObject();
        w.key("out_of_bounds").beginObject()
                .field("count", table.wrong())
                .field("okay", table.wrong() == 0)
                .endObject();
        w.key("average_bus_bandwidth").beginObject()
                .field("bandwidth", table.averageBusBw())
                .endObject();
        if (gate != null) {
            w.key("gate").beginObject().field("min", gate.min);
            w.key("large");
            if (Double.isNaN(gate.large)) {
                w.nullValue();
            } else {
                w.value(gate.large);
            }
            w.field("passed", gatePassed);
            w.key("failures").beginArray();
            for (String f : gate.failures()) {
                w.value(f);
            }
            w.endArray().endObject();
        }
        w.endObject();
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        Files.write(file, (w + "\n").getBytes(StandardCharsets.UTF_8));
    }

    private static void environment(JsonWriter w, RunEnv env) {
        w.key("environment").beginObject()
                .field("backend", env.backend)
                .field("backend_note", env.backendNote)
                .field("backend_description", env.backendDescription)
                .field("device_count", env.deviceCount)
                .field("ranks", env.devices.length)
                .field("host", env.host)
                .field("pid", env.pid);
        w.key("devices").beginArray();
        for (int r = 0; r < env.devices.length; r++) {
            w.beginObject().field("rank", r).field("device", env.devices[r]).field("backend", env.backend);
            io.flexlink.topo.GpuInfo g = env.facts.gpu(env.devices[r]);
            if (g != null) {
                w.field("model", g.model()).field("pci_bus_id", g.pciBusId());
            }
            w.endObject();
        }
        w.endArray().endObject();
    }

    private static void options(JsonWriter w, PerfOptions o) {
        w.key("config").beginObject()
                .field("ngpus", o.ranks)
                .field("minimum_bytes", o.minBytes)
                .field("maximum_bytes", o.maxBytes);
        if (o.stepFactor > 1) {
            w.field("step_factor", o.stepFactor);
        } else {
            w.field("step_bytes", o.stepBytes);
        }
        w.field("warmup_iters", o.warmup)
                .field("iterations", o.iters)
                .field("validation", o.check)
                .field("blocking_collectives", o.blocking != 0)
                .field("root", o.root)
                .field("seed", o.seed)
                .field("baseline", o.baseline)
                .endObject();
    }

    private static void settings(JsonWriter w, FlexLinkConfig config) {
        w.key("settings").beginObject();
        for (Setting<?> s : FlexLinkConfig.settings()) {
            String v = config.raw(s);
            w.field(s.property(), s == FlexLinkConfig.SECRET && !v.isEmpty() ? "(set, not shown)" : v);
        }
        w.endObject();
    }

    private static void row(JsonWriter w, Row r, List<String> auxPaths) {
        w.beginObject()
                .field("size", r.bytes)
                .field("count", r.count)
                .field("type", r.type.ncclName())
                .field("redop", r.opName())
                .field("root", r.root);
        run(w, "out_of_place", r.outOfPlace);
        run(w, "in_place", r.inPlace);
        w.key("shares").beginObject();
        for (int i = 0; i < auxPaths.size(); i++) {
            w.field(auxPaths.get(i), i < r.shares.length ? r.shares[i] : 0);
        }
        w.endObject();
        if (r.baseline != null) {
            run(w, "baseline", r.baseline);
            w.field("vs", r.vs());
        }
        w.endObject();
    }

    private static void run(JsonWriter w, String name, Row.Run run) {
        w.key(name);
        if (run == null) {
            w.nullValue();
            return;
        }
        w.beginObject()
                .field("time", run.timeUs)
                .field("alg_bw", run.algBw)
                .field("bus_bw", run.busBw);
        w.key("nwrong");
        if (run.wrong < 0) {
            w.nullValue();
        } else {
            w.value(run.wrong);
        }
        w.endObject();
    }

    private static void totals(JsonWriter w, String name, ShareMeter meter) {
        w.key(name).beginArray();
        List<List<CommStats.PathTotals>> perRank = meter.perRank();
        for (int r = 0; r < perRank.size(); r++) {
            w.beginObject().field("rank", r);
            w.key("paths").beginArray();
            for (CommStats.PathTotals t : perRank.get(r)) {
                w.beginObject()
                        .field("path", t.path())
                        .field("calls", t.calls())
                        .field("bytes", t.bytes())
                        .field("seconds", t.seconds())
                        .field("timed_calls", t.timedCalls())
                        .endObject();
            }
            w.endArray().endObject();
        }
        w.endArray();
    }
}
