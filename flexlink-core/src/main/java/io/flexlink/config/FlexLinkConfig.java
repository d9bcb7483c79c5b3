package io.flexlink.config;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;

/**
 * Every FlexLink setting, declared once. A value comes from, in order: an explicit override
 * ({@link Builder#set}), the Java system property ({@code -Dflexlink.chunkBytes=8M}), the environment
 * variable ({@code FLEXLINK_CHUNK_BYTES=8M}), the default. {@code docs/configuration.md} lists them and
 * a test keeps it in step with this class.
 */
public final class FlexLinkConfig {
    private static final List<Setting<?>> ALL = new ArrayList<>();

    /** Which runtime to use. */
    public static final Setting<String> BACKEND = define("flexlink.backend", "auto",
            "Runtime backend: `auto` (CUDA when a GPU and the CUDA libraries load, else host), `host` or `cuda`.",
            s -> oneOf("flexlink.backend", s, "auto", "host", "cuda"));

    /** The paths a communicator may use. */
    public static final Setting<List<String>> PATHS = define("flexlink.paths", "primary,pcie",
            "Comma-separated paths a communicator may split buffers over: `primary` (NCCL, or a host-memory ring "
                    + "on the host backend), `pcie` (pinned host staging), `nvshmem` (GPU-initiated RDMA). Leaving out "
                    + "`primary` sends everything over the other paths.",
            FlexLinkConfig::parsePaths);

    /** Fixed shares, or {@code auto} for the balancer. */
    public static final Setting<Map<String, Double>> SHARE = define("flexlink.share", "auto",
            "Fraction of each collective's elements given to each auxiliary path, e.g. `pcie=0.25` or "
                    + "`pcie=0.2,nvshmem=0.1`; the primary path takes the rest. `auto` lets the balancer choose.",
            FlexLinkConfig::parseShares);

    /** Staging chunk size. */
    public static final Setting<Long> CHUNK_BYTES = define("flexlink.chunkBytes", "8M",
            "Bytes per pipelined chunk, and per staging slot, of the staged paths (PCIe path and host ring).",
            s -> positive("flexlink.chunkBytes", ByteSizes.parse(s)));

    /** Slots per producer. */
    public static final Setting<Integer> SLOTS = define("flexlink.slots", "4",
            "Staging slots per producer (at least 2, so that copies into one slot overlap reads of another).",
            s -> atLeast("flexlink.slots", Integer.parseInt(s), 2));

    /** Size below which calls stay on the primary path. */
    public static final Setting<Long> MIN_SPLIT_BYTES = define("flexlink.minSplitBytes", "1M",
            "Collectives smaller than this many bytes (per rank's buffer) use the primary path alone, "
                    + "whatever the shares say.",
            ByteSizes::parse);

    /** Devices of the host backend. */
    public static final Setting<Integer> HOST_DEVICES = define("flexlink.host.devices", "8",
            "Number of emulated devices the host backend offers.",
            s -> atLeast("flexlink.host.devices", Integer.parseInt(s), 1));

    /** How long creating a communicator may wait for its peers. */
    public static final Setting<Duration> INIT_TIMEOUT = define("flexlink.initTimeout", "120s",
            "How long communicator creation waits for every rank to arrive before failing with the missing ranks named.",
            FlexLinkConfig::parseDuration);

    /** The watchdog's limit per collective. */
    public static final Setting<Duration> TIMEOUT = define("flexlink.timeout", "0",
            "Watchdog: a collective not complete this long after it was enqueued (or a call stuck this long "
                    + "on the host) aborts its communicator, with one WARN line naming the path and the ranks it "
                    + "waited on; errors of enqueued work are then also noticed within a fraction of it and "
                    + "reach every rank. `0` (default, like NCCL) turns the watchdog off: poll getAsyncError() "
                    + "instead. See docs/operations.md.",
            FlexLinkConfig::parseDuration);

    /** Link emulation of the host backend. */
    public static final Setting<String> EMULATE = define("flexlink.emulate", "off",
            "Host backend only: throttle each path's inbound transfers like a link, e.g. "
                    + "`primary:400MB/s,pcie:100MB/s@50us` (rate per rank in bus-bandwidth terms, optional latency "
                    + "per chunk). Paths: `primary`, `pcie`, `nvshmem`, and `rail` (the inter-node link of a "
                    + "multi-node communicator, per rank and direction), each at most once; rates in GB/s, MB/s or "
                    + "KB/s, latencies in ns, us or ms. `off` runs at memory speed.",
            s -> s);

    /** Calls per balancer decision round. */
    public static final Setting<Integer> BALANCE_WINDOW = define("flexlink.balance.window", "4",
            "Calls of one collective and size bucket per balancer round: each round the ranks exchange the "
                    + "measured per-path times of the previous round and move the shares.",
            s -> atLeast("flexlink.balance.window", Integer.parseInt(s), 1));

    /** Coarse tuning budget. */
    public static final Setting<Integer> TUNING_BUDGET = define("flexlink.tuning.budget", "24",
            "Most balancer rounds the coarse stage (probing each path alone, then raising the auxiliary share "
                    + "until an auxiliary path is the bottleneck) may spend per collective and size bucket.",
            s -> atLeast("flexlink.tuning.budget", Integer.parseInt(s), 3));

    /** Where tuned shares persist. */
    public static final Setting<String> TUNING_CACHE = define("flexlink.tuning.cache", "~/.cache/flexlink/tuning",
            "Directory of the tuning cache (one file per topology fingerprint), so that a restart skips "
                    + "tuning; `off` disables it.",
            s -> s);

    /** Where rank 0's TCP rendezvous listens. */
    public static final Setting<String> BOOTSTRAP_BIND = define("flexlink.bootstrap.bind", "",
            "Address rank 0's TCP rendezvous binds to when the ranks are processes. Empty: the address in the "
                    + "unique id (MASTER_ADDR under torchrun's variables). `0.0.0.0` listens on every interface; "
                    + "keep the rendezvous on loopback or a cluster-internal network (see docs/operations.md).",
            s -> s);

    /** The shared secret of a job launched from torchrun's environment. */
    public static final Setting<byte[]> SECRET = define("flexlink.secret", "",
            "Shared secret of a job started with torchrun's variables (FlexLink.initFromEnv): hex or Base64, at "
                    + "least 16 bytes, the same in every process. Empty: peers are admitted by a token derived from "
                    + "MASTER_ADDR, MASTER_PORT, WORLD_SIZE and the job id, which keeps jobs apart but is no secret. "
                    + "Never printed.",
            FlexLinkConfig::parseSecret);

    /** Identifies a job launched from torchrun's environment. */
    public static final Setting<String> JOB_ID = define("flexlink.jobId", "",
            "Job id mixed into the rendezvous token of FlexLink.initFromEnv, so that two jobs reusing "
                    + "MASTER_ADDR:MASTER_PORT never join each other; empty: TORCHELASTIC_RUN_ID when set.",
            s -> s);

    /** Where memory shared between processes lives. */
    public static final Setting<String> SHM_DIR = define("flexlink.shm.dir", "/dev/shm",
            "Directory (a tmpfs) of the files through which the processes of one communicator share staging "
                    + "memory and counters; each file is removed as soon as every rank has mapped it.",
            s -> s);

    /** NVSHMEM's host library. */
    public static final Setting<String> NVSHMEM_LIBRARY = define("flexlink.nvshmem.library", "libnvshmem_host.so.3",
            "NVSHMEM 3.x host library the `nvshmem` path opens at run time: a file name looked up on the loader's "
                    + "search path (`LD_LIBRARY_PATH`), or a path. Where it does not open, the path reports itself "
                    + "unavailable and the other paths carry every collective.",
            s -> s.trim());

    /** NUMA placement of pinned staging memory. */
    public static final Setting<String> NUMA = define("flexlink.numa", "auto",
            "CUDA backend: put each producer's staging slots on the NUMA node of its GPU (bound before the "
                    + "memory is pinned). `auto` where the host has several NUMA nodes, `off`, or `force` (also on "
                    + "one node: tests the placed allocation path).",
            s -> oneOf("flexlink.numa", s, "auto", "off", "force"));

    // ---- several nodes ----

    /** Which node this process runs on. */
    public static final Setting<String> NODE_ID = define("flexlink.nodeId", "",
            "The node this process runs on, as communicator creation compares it: ranks with the same id share "
                    + "staging memory (they must share the shared-memory directory), ranks with different ids are "
                    + "joined by rails (NCCL across nodes; TCP on the host backend) under a hierarchical "
                    + "communicator. Empty: the host name, the kernel's boot id and the identity of "
                    + "flexlink.shm.dir, which two machines or two containers with separate /dev/shm never share. "
                    + "Set it to emulate nodes on one machine (tests) or to group containers yourself.",
            s -> s);

    /** Piece size of a multi-node AllReduce whose stages overlap. */
    public static final Setting<Long> HIER_PIECE_BYTES = define("flexlink.hier.pieceBytes", "32M",
            "Multi-node communicators: an AllReduce of at least twice this many bytes per rank runs in pieces of "
                    + "about this size (at most 8), so that one piece's rail stage (across nodes) overlaps the "
                    + "node-local stages of its neighbours; smaller calls run their stages one after the other. "
                    + "`0` never overlaps. Every rank must use the same value.",
            ByteSizes::parse);

    private final Map<Setting<?>, String> overrides;
    private final Function<String, String> env;
    private final Map<Setting<?>, Object> cache = new HashMap<>();

    private FlexLinkConfig(Map<Setting<?>, String> overrides, Function<String, String> env) {
        this.overrides = overrides;
        this.env = env;
    }

    private static <T> Setting<T> define(String property, String def, String doc, Function<String, T> parser) {
        Setting<T> s = new Setting<>(property, def, doc, parser);
        ALL.add(s);
        return s;
    }

    /** Every setting, in declaration order. */
    public static List<Setting<?>> settings() {
        return Collections.unmodifiableList(ALL);
    }

    /** The configuration of this process: system properties, then environment, then defaults. */
    public static FlexLinkConfig fromEnvironment() {
        return builder().build();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** A copy of this configuration with {@code setting} set to {@code value}. */
    public FlexLinkConfig with(Setting<?> setting, String value) {
        Map<Setting<?>, String> o = new LinkedHashMap<>(overrides);
        o.put(setting, value);
        return new FlexLinkConfig(o, env);
    }

    /** The typed value of {@code setting}. */
    @SuppressWarnings("unchecked")
    public synchronized <T> T get(Setting<T> setting) {
        Object v = cache.get(setting);
        if (v == null) {
            String text = raw(setting);
            try {
                v = setting.parse(text);
            } catch (FlexLinkException e) {
                throw e;
            } catch (RuntimeException e) {
                throw new FlexLinkException(Result.INVALID_ARGUMENT, setting.property() + " (" + setting.env()
                        + "): cannot use '" + (setting == SECRET ? "<hidden>" : text) + "': " + e.getMessage());
            }
            cache.put(setting, v);
        }
        return (T) v;
    }

    /** The text value of {@code setting} and where it came from is not kept; this is the text itself. */
    public String raw(Setting<?> setting) {
        String v = overrides.get(setting);
        if (v == null) {
            v = System.getProperty(setting.property());
        }
        if (v == null) {
            v = env.apply(setting.env());
        }
        return v == null ? setting.defaultValue() : v;
    }

    public String backend() {
        return get(BACKEND);
    }

    public List<String> paths() {
        return get(PATHS);
    }

    /**
     * Fixed shares per auxiliary path; empty when the balancer chooses ({@code auto}). A share for a path
     * that {@link #PATHS} does not enable is an error, not a silent zero.
     */
    public Map<String, Double> shares() {
        Map<String, Double> shares = get(SHARE);
        List<String> paths = paths();
        for (String path : shares.keySet()) {
            if (!paths.contains(path)) {
                throw new FlexLinkException(Result.INVALID_ARGUMENT, "flexlink.share: gives a share to path '" + path
                        + "', which flexlink.paths (" + String.join(",", paths) + ") does not enable");
            }
        }
        return shares;
    }

    public long chunkBytes() {
        return get(CHUNK_BYTES);
    }

    public int slots() {
        return get(SLOTS);
    }

    public long minSplitBytes() {
        return get(MIN_SPLIT_BYTES);
    }

    public int hostDevices() {
        return get(HOST_DEVICES);
    }

    public Duration initTimeout() {
        return get(INIT_TIMEOUT);
    }

    /** The watchdog's limit per collective; zero when the watchdog is off. */
    public Duration timeout() {
        return get(TIMEOUT);
    }

    public String numa() {
        return get(NUMA);
    }

    public String emulate() {
        return get(EMULATE);
    }

    public int balanceWindow() {
        return get(BALANCE_WINDOW);
    }

    public int tuningBudget() {
        return get(TUNING_BUDGET);
    }

    /** The tuning cache directory, or null when off. */
    public java.nio.file.Path tuningCache() {
        String v = get(TUNING_CACHE);
        if (v.equalsIgnoreCase("off") || v.isEmpty()) {
            return null;
        }
        if (v.startsWith("~")) {
            v = System.getProperty("user.home") + v.substring(1);
        }
        return java.nio.file.Path.of(v);
    }

    /** Builds a configuration with explicit overrides. */
    public static final class Builder {
        private final Map<Setting<?>, String> overrides = new LinkedHashMap<>();
        private Function<String, String> env = System::getenv;

        public Builder set(Setting<?> setting, String value) {
            overrides.put(setting, value);
            return this;
        }

        /** Replaces the environment (tests). */
        public Builder environment(Map<String, String> environment) {
            Map<String, String> copy = new HashMap<>(environment);
            this.env = copy::get;
            return this;
        }

        public FlexLinkConfig build() {
            return new FlexLinkConfig(new LinkedHashMap<>(overrides), env);
        }
    }

    /** The secret of {@link #SECRET}'s, decoded; empty when unset. */
    public byte[] secret() {
        return get(SECRET).clone();
    }

    /** Rank 0's rendezvous bind address, or null for the address in the unique id. */
    public String bootstrapBind() {
        String v = get(BOOTSTRAP_BIND).trim();
        return v.isEmpty() ? null : v;
    }

    public java.nio.file.Path shmDir() {
        return java.nio.file.Path.of(get(SHM_DIR));
    }

    /** NVSHMEM's host library: a file name for the loader's search path, or a path. */
    public String nvshmemLibrary() {
        return get(NVSHMEM_LIBRARY);
    }

    // ---- parsers ----

    /** Hex (an even number of hex digits) or Base64; at least 16 bytes. The value itself is never echoed. */
    static byte[] parseSecret(String s) {
        if (s.isEmpty()) {
            return new byte[0];
        }
        byte[] b;
        if (s.matches("(?:[0-9a-fA-F]{2})+")) {
            b = java.util.HexFormat.of().parseHex(s);
        } else {
            try {
                b = java.util.Base64.getDecoder().decode(s.replace('-', '+').replace('_', '/'));
            } catch (IllegalArgumentException e) {
                throw new FlexLinkException(Result.INVALID_ARGUMENT, "flexlink.secret: neither hex nor Base64");
            }
        }
        if (b.length < 16) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT,
                    "flexlink.secret: " + b.length + " bytes is too short (at least 16: 32 hex digits)");
        }
        return b;
    }

    private static String oneOf(String name, String v, String... allowed) {
        String l = v.toLowerCase(Locale.ROOT);
        for (String a : allowed) {
            if (a.equals(l)) {
                return a;
            }
        }
        throw new FlexLinkException(Result.INVALID_ARGUMENT,
                name + ": '" + v + "' is not one of " + String.join("|", allowed));
    }

    private static long positive(String name, long v) {
        if (v <= 0) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, name + ": must be positive, got " + v);
        }
        return v;
    }

    private static int atLeast(String name, int v, int min) {
        if (v < min) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, name + ": must be at least " + min + ", got " + v);
        }
        return v;
    }

    /** Known path names. */
    public static final List<String> PATH_NAMES = List.of("primary", "pcie", "nvshmem");

    static List<String> parsePaths(String s) {
        List<String> out = new ArrayList<>();
        for (String p : s.split(",")) {
            String n = p.trim().toLowerCase(Locale.ROOT);
            if (n.isEmpty() || out.contains(n)) {
                continue;
            }
            if (!PATH_NAMES.contains(n)) {
                throw new FlexLinkException(Result.INVALID_ARGUMENT,
                        "flexlink.paths: unknown path '" + p.trim() + "' (known: " + PATH_NAMES + ")");
            }
            out.add(n);
        }
        if (out.isEmpty()) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "flexlink.paths: no path given");
        }
        return Collections.unmodifiableList(out);
    }

    static Map<String, Double> parseShares(String s) {
        Map<String, Double> out = new LinkedHashMap<>();
        if (s.isEmpty() || s.equalsIgnoreCase("auto")) {
            return Collections.unmodifiableMap(out);
        }
        double sum = 0;
        for (String part : s.split(",")) {
            String[] kv = part.split("=");
            if (kv.length != 2) {
                throw new FlexLinkException(Result.INVALID_ARGUMENT,
                        "flexlink.share: expected path=fraction, got '" + part.trim() + "'");
            }
            String path = kv[0].trim().toLowerCase(Locale.ROOT);
            if (!PATH_NAMES.contains(path) || path.equals("primary")) {
                throw new FlexLinkException(Result.INVALID_ARGUMENT,
                        "flexlink.share: '" + path + "' is not an auxiliary path (pcie, nvshmem)");
            }
            double f = Double.parseDouble(kv[1].trim());
            if (!(f >= 0 && f <= 1)) {
                throw new FlexLinkException(Result.INVALID_ARGUMENT,
                        "flexlink.share: share of " + path + " must be in [0, 1], got " + kv[1].trim());
            }
            out.put(path, f);
            sum += f;
        }
        if (sum > 1 + 1e-9) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "flexlink.share: shares add up to " + sum + " > 1");
        }
        return Collections.unmodifiableMap(out);
    }

    static Duration parseDuration(String s) {
        String t = s.trim().toLowerCase(Locale.ROOT);
        if (t.equals("0") || t.equals("off") || t.equals("none")) {
            return Duration.ZERO;
        }
        long mult;
        String num;
        if (t.endsWith("ms")) {
            mult = 1;
            num = t.substring(0, t.length() - 2);
        } else if (t.endsWith("s")) {
            mult = 1000;
            num = t.substring(0, t.length() - 1);
        } else if (t.endsWith("m")) {
            mult = 60_000;
            num = t.substring(0, t.length() - 1);
        } else {
            mult = 1000;
            num = t;
        }
        long v = Long.parseLong(num.trim());
        if (v < 0) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "duration must not be negative: " + s);
        }
        return Duration.ofMillis(v * mult);
    }
}
