package io.flexlink.bench.ddp;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.config.Setting;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * The example's settings, from its command line. FlexLink's own settings ({@code --share}, {@code --paths},
 * {@code --min-split}, {@code --chunk}, bucket caps) become overrides of {@link FlexLinkConfig}; everything
 * else in FlexLinkConfig comes from the environment as usual.
 *
 * @param devices device of each rank; null: rank {@code r} on device {@code r} (modulo the device count)
 */
record TrainOptions(String backend, int ranks, int[] devices, int[] widths, int teacherHidden, int batch,
                    int steps, float lr, long seed, int timingRounds, boolean contiguousGradients, String cast,
                    boolean average, boolean rebuild, boolean fromEnv, Map<Setting<?>, String> overrides) {
    static final String USAGE = String.join("\n",
            "usage: TrainMain [options]",
            "  --backend host|cuda|auto   runtime (default host)",
            "  --ranks N                  ranks in this process, one thread each (default 4)",
            "  --devices 0,0,...          device of each rank (default: rank r on device r)",
            "  --from-env                 one process per rank, from torchrun's RANK, WORLD_SIZE, MASTER_ADDR, ...",
            "  --layers 64,256,256,16     widths of the student network, input first (default)",
            "  --teacher-hidden N         hidden width of the teacher network (default 64)",
            "  --batch N                  samples per rank per step (default 32)",
            "  --steps N                  training steps (default 50)",
            "  --lr X                     SGD learning rate (default 0.05)",
            "  --seed N                   data and weight seed (default 1)",
            "  --timing-rounds N          timed steps per mode after training (default 10; 0: none)",
            "  --grads contiguous|separate  gradients in one buffer (reduced in place) or one each (copied)",
            "  --cast none|bf16|fp16      carry the gradients in a narrow type (default none)",
            "  --reduction avg|sum        AVG, or SUM with the scale 1/ranks (same result, other code path)",
            "  --no-rebuild               keep the first buckets (do not rebuild from the first step's order)",
            "  --share pcie=0.25 --paths primary,pcie --min-split 0 --chunk 1M   FlexLink settings (flexlink.*)",
            "  --emulate primary:200MB/s,pcie:50MB/s   host backend: throttle each path like a link",
            "  --bucket-cap 25M --first-bucket-cap 1M");

    static TrainOptions defaults() {
        return new TrainOptions("host", 4, null, new int[] {64, 256, 256, 16}, 64, 32, 50, 0.05f, 1, 10, true,
                "none", true, true, false, new LinkedHashMap<>());
    }

    static TrainOptions parse(String[] args) {
        TrainOptions o = defaults();
        Map<Setting<?>, String> over = new LinkedHashMap<>();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            switch (a) {
                case "--from-env": o = o.with(b -> b.fromEnv = true); continue;
                case "--no-rebuild": o = o.with(b -> b.rebuild = false); continue;
                default: break;
            }
            if (i + 1 >= args.length) {
                throw bad(a + ": needs a value");
            }
            String v = args[++i];
            switch (a) {
                case "--backend": o = o.with(b -> b.backend = oneOf(a, v, "host", "cuda", "auto")); break;
                case "--ranks": o = o.with(b -> b.ranks = positive(a, v)); break;
                case "--devices": o = o.with(b -> b.devices = ints(a, v)); break;
                case "--layers": o = o.with(b -> b.widths = ints(a, v)); break;
                case "--teacher-hidden": o = o.with(b -> b.teacherHidden = positive(a, v)); break;
                case "--batch": o = o.with(b -> b.batch = positive(a, v)); break;
                case "--steps": o = o.with(b -> b.steps = positive(a, v)); break;
                case "--lr": o = o.with(b -> b.lr = Float.parseFloat(v)); break;
                case "--seed": o = o.with(b -> b.seed = Long.parseLong(v)); break;
                case "--timing-rounds": o = o.with(b -> b.timingRounds = Integer.parseInt(v)); break;
                case "--grads":
                    o = o.with(b -> b.contiguous = oneOf(a, v, "contiguous", "separate").equals("contiguous"));
                    break;
                case "--cast": o = o.with(b -> b.cast = oneOf(a, v, "none", "bf16", "fp16")); break;
                case "--reduction": o = o.with(b -> b.average = oneOf(a, v, "avg", "sum").equals("avg")); break;
                case "--share": over.put(FlexLinkConfig.SHARE, v); break;
                case "--paths": over.put(FlexLinkConfig.PATHS, v); break;
                case "--min-split": over.put(FlexLinkConfig.MIN_SPLIT_BYTES, v); break;
                case "--chunk": over.put(FlexLinkConfig.CHUNK_BYTES, v); break;
                case "--emulate": over.put(FlexLinkConfig.EMULATE, v); break;
                case "--bucket-cap": over.put(FlexLinkConfig.DDP_BUCKET_CAP, v); break;
                case "--first-bucket-cap": over.put(FlexLinkConfig.DDP_FIRST_BUCKET_CAP, v); break;
                default: throw bad("unknown option " + a);
            }
        }
        if (o.widths().length < 2) {
            throw bad("--layers: needs at least an input and an output width");
        }
        if (o.devices() != null && o.devices().length != o.ranks() && !o.fromEnv()) {
            throw bad("--devices: " + o.devices().length + " devices for " + o.ranks() + " ranks");
        }
        TrainOptions parsed = o;
        return parsed.with(b -> b.overrides.putAll(over));
    }

    /** FlexLink's configuration: the environment with this run's overrides. */
    FlexLinkConfig config() {
        FlexLinkConfig.Builder b = FlexLinkConfig.builder();
        b.set(FlexLinkConfig.BACKEND, backend);
        overrides.forEach(b::set);
        return b.build();
    }

    /** The same run on one rank holding every rank's samples: the reference of the data-parallel run. */
    TrainOptions singleRankOnWholeBatch() {
        return with(b -> {
            b.batch = batch * ranks;
            b.ranks = 1;
            b.devices = devices == null ? null : new int[] {devices[0]};
        });
    }

    /** A copy changed by {@code change}. */
    TrainOptions with(java.util.function.Consumer<Mutable> change) {
        Mutable m = new Mutable(this);
        change.accept(m);
        return m.build();
    }

    String layersText() {
        return String.join("-", Arrays.stream(widths).mapToObj(Integer::toString).toArray(String[]::new));
    }

    private static FlexLinkException bad(String message) {
        return new FlexLinkException(Result.INVALID_ARGUMENT, message);
    }

    private static String oneOf(String option, String v, String... allowed) {
        String l = v.toLowerCase(Locale.ROOT);
        for (String a : allowed) {
            if (a.equals(l)) {
                return a;
            }
        }
        throw bad(option + ": '" + v + "' is not one of " + String.join("|", allowed));
    }

    private static int positive(String option, String v) {
        int n = Integer.parseInt(v);
        if (n <= 0) {
            throw bad(option + ": must be positive, got " + v);
        }
        return n;
    }

    private static int[] ints(String option, String v) {
        int[] out = Arrays.stream(v.split(",")).map(String::trim).mapToInt(Integer::parseInt).toArray();
        for (int x : out) {
            if (x < 0) {
                throw bad(option + ": negative value in '" + v + "'");
            }
        }
        return out;
    }

    /** The fields while a copy is changed. */
    static final class Mutable {
        String backend;
        int ranks;
        int[] devices;
        int[] widths;
        int teacherHidden;
        int batch;
        int steps;
        float lr;
        long seed;
        int timingRounds;
        boolean contiguous;
        String cast;
        boolean average;
        boolean rebuild;
        boolean fromEnv;
        Map<Setting<?>, String> overrides;

        Mutable(TrainOptions o) {
            backend = o.backend;
            ranks = o.ranks;
            devices = o.devices;
            widths = o.widths;
            teacherHidden = o.teacherHidden;
            batch = o.batch;
            steps = o.steps;
            lr = o.lr;
            seed = o.seed;
            timingRounds = o.timingRounds;
            contiguous = o.contiguousGradients;
            cast = o.cast;
            average = o.average;
            rebuild = o.rebuild;
            fromEnv = o.fromEnv;
            overrides = new LinkedHashMap<>(o.overrides);
        }

        TrainOptions build() {
            return new TrainOptions(backend, ranks, devices, widths, teacherHidden, batch, steps, lr, seed,
                    timingRounds, contiguous, cast, average, rebuild, fromEnv, overrides);
        }
    }
}
