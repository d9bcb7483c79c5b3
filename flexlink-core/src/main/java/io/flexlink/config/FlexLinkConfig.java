package io.flexlink.config;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * Every FlexLink setting, declared once. A value comes from an override ({@link Builder#set}), else the system
 * property ({@code -Dflexlink.chunkBytes=8M}), else the environment ({@code FLEXLINK_CHUNK_BYTES=8M}), else the
 * default; {@code docs/configuration.md} lists them (a test keeps it in step). A configuration is resolved and
 * checked once, as a whole ({@link #conclude()}, as Aeron's contexts), when a backend or communicator is made:
 * a bad value fails there, naming the setting and its variable (INVALID_ARGUMENT), never inside a call.
 */
public final class FlexLinkConfig {
    private static final List<Setting<?>> ALL = new ArrayList<>();

    /** The value of a setting left to its {@code auto} rule; below, the values where that rule has nothing to say. */
    public static final long AUTO = -1;
    public static final long DEFAULT_CHUNK_BYTES = 8L << 20;
    public static final int DEFAULT_SLOTS = 4;

    /** Known path names. */
    public static final List<String> PATH_NAMES = List.of("primary", "pcie", "nvshmem");

    /** Which runtime to use. */
    public static final Setting<String> BACKEND = define("flexlink.backend", "auto", "Runtime backend: `auto` (CUDA "
            + "when a GPU and the CUDA libraries load, else host), `host` or `cuda`.",
            SettingParsers.oneOf("auto", "host", "cuda"));

    /** The paths a communicator may use. */
    public static final Setting<List<String>> PATHS = define("flexlink.paths", "primary,pcie",
            "Comma-separated paths a communicator may split buffers over: `primary` (NCCL, or a host-memory ring "
                    + "on the host backend), `pcie` (pinned host staging), `nvshmem` (GPU-initiated RDMA). Leaving out "
                    + "`primary` sends everything over the other paths.",
            SettingParsers::paths);

    /** Fixed shares, or {@code auto} for the balancer. */
    public static final Setting<Map<String, Double>> SHARE = define("flexlink.share", "auto",
            "Fraction of each collective's elements given to each auxiliary path, e.g. `pcie=0.25` or "
                    + "`pcie=0.2,nvshmem=0.1`; the primary path takes the rest. `auto` lets the balancer choose.",
            SettingParsers::shares);

    /** Staging chunk size. */
    public static final Setting<Long> CHUNK_BYTES = define("flexlink.chunkBytes", "auto",
            "Bytes per pipelined chunk, and per staging slot, of the staged paths (PCIe path and host ring): "
                    + "from 4K (slots are page-aligned) to 1G. `auto`: 8M, but on the PCIe path of ranks created "
                    + "together by one thread (`initAll`) 4M per rank, up to 32M, so that each rank's piece of a "
                    + "slot stays large enough to be worth its host enqueue (docs/design.md).",
            SettingParsers.autoOr(AUTO, SettingParsers.bytesBetween(4096, 1L << 30, " (slots are page-aligned)")));

    /** Slots per producer. */
    public static final Setting<Integer> SLOTS = define("flexlink.slots", "auto",
            "Staging slots per producer: 2 to 256 (at least 2, so that copies into one slot overlap reads of "
                    + "another). `auto`: 4, or 2 where 4 would put more than 256M into the PCIe path's staging area.",
            SettingParsers.autoOr((int) AUTO, SettingParsers.intBetween(2, 256)));

    /** Size below which calls stay on the primary path. */
    public static final Setting<Long> MIN_SPLIT_BYTES = define("flexlink.minSplitBytes", "1M", "Collectives smaller "
            + "than this many bytes (per rank's buffer) use the primary path alone, whatever the shares say.",
            SettingParsers::bytes);

    /** Devices of the host backend. */
    public static final Setting<Integer> HOST_DEVICES = define("flexlink.host.devices", "8",
            "Number of emulated devices the host backend offers (1 to 1024).", SettingParsers.intBetween(1, 1024));

    /** How long creating a communicator may wait for its peers. */
    public static final Setting<Duration> INIT_TIMEOUT = define("flexlink.initTimeout", "120s",
            "How long communicator creation waits for every rank to arrive before failing with the missing ranks "
                    + "named; positive.",
            SettingParsers.duration(true));

    /** The watchdog's limit per collective. */
    public static final Setting<Duration> TIMEOUT = define("flexlink.timeout", "10m",
            "Watchdog: a collective that has been running this long (every earlier call of its communicator "
                    + "done, itself not), or a call stuck this long on the host, aborts its communicator, with one "
                    + "WARN line naming the path and the ranks it waited on, and the flight recorder of the last "
                    + "calls in the log and in `flexlink.flightRecorder`; errors of enqueued work are noticed "
                    + "within a fraction of it and reach every rank. `0` turns the watchdog off (like NCCL): poll "
                    + "getAsyncError() instead. See docs/operations.md.",
            SettingParsers.duration(false));

    /** Where the watchdog writes its flight recorder. */
    public static final Setting<String> FLIGHT_RECORDER = define("flexlink.flightRecorder", "/tmp/flexlink-flight",
            "File prefix of the watchdog's flight recorder: when the watchdog aborts a communicator, the rank "
                    + "appends its last calls (sequence number, collective, size, type, state, times) to "
                    + "`<prefix>-<pid>-rank<r>.txt`. `off`: the log only. The watchdog is one thread per process, "
                    + "so it reads this from the process's system property or environment variable, not from "
                    + "an override in code.",
            SettingParsers::pathText);

    /** Link emulation of the host backend. */
    public static final Setting<String> EMULATE = define("flexlink.emulate", "off",
            "Host backend only: throttle each path's inbound transfers like a link, e.g. "
                    + "`primary:400MB/s,pcie:100MB/s@50us` (rate per rank in bus-bandwidth terms, optional latency "
                    + "per chunk). Paths: `primary`, `pcie`, `nvshmem`, and `rail` (the inter-node link of a "
                    + "multi-node communicator, per rank and direction), each at most once; rates in GB/s, MB/s or "
                    + "KB/s, latencies in ns, us or ms. `off` runs at memory speed.", EmulatedLinks::check);

    /** Calls per balancer decision round. */
    public static final Setting<Integer> BALANCE_WINDOW = define("flexlink.balance.window", "4", "Calls of one "
            + "collective and size bucket per balancer round: each round the ranks exchange the measured per-path "
            + "times of the previous round and move the shares.", SettingParsers.intBetween(1, 1 << 20));

    /** Coarse tuning budget. */
    public static final Setting<Integer> TUNING_BUDGET = define("flexlink.tuning.budget", "24", "Most balancer rounds "
            + "the coarse stage (probing each path alone, then raising the auxiliary share until an auxiliary path is "
            + "the bottleneck) may spend per collective and size bucket.", SettingParsers.intBetween(3, 1 << 20));

    /** Where tuned shares persist. */
    public static final Setting<String> TUNING_CACHE = define("flexlink.tuning.cache", "~/.cache/flexlink/tuning",
            "Directory of the tuning cache (one file per topology fingerprint), so that a restart skips "
                    + "tuning; `off` disables it.",
            SettingParsers::pathText);

    /** Where rank 0's TCP rendezvous listens. */
    public static final Setting<String> BOOTSTRAP_BIND = define("flexlink.bootstrap.bind", "",
            "Address rank 0's TCP rendezvous binds to when the ranks are processes. Empty: the address in the "
                    + "unique id (MASTER_ADDR under torchrun's variables). `0.0.0.0` listens on every interface; "
                    + "keep the rendezvous on loopback or a cluster-internal network (see docs/operations.md).",
            s -> s);

    /** A fixed address for the unique ids of the NCCL facade (like NCCL_COMM_ID). */
    public static final Setting<String> COMM_ID = define("flexlink.commId", "",
            "`host:port` for the unique ids of `FlexNccl.ncclGetUniqueId`, like NCCL_COMM_ID: rank 0 listens "
                    + "there when it calls ncclCommInitRank (nothing listens before). Empty: each id gets a lobby "
                    + "on loopback at a port the system picks (docs/operations.md).",
            SettingParsers::hostPort);

    /** The shared secret of a job launched from torchrun's environment. */
    public static final Setting<byte[]> SECRET = define("flexlink.secret", "",
            "Shared secret of a job started with torchrun's variables (FlexLink.initFromEnv): hex or Base64, at "
                    + "least 16 bytes, the same in every process. Empty: peers are admitted by a token derived from "
                    + "MASTER_ADDR, MASTER_PORT, WORLD_SIZE and the job id, which keeps jobs apart but is no secret. "
                    + "Never printed.",
            SettingParsers::secret);

    /** Identifies a job launched from torchrun's environment. */
    public static final Setting<String> JOB_ID = define("flexlink.jobId", "",
            "Job id mixed into the rendezvous token of FlexLink.initFromEnv, so that two jobs reusing "
                    + "MASTER_ADDR:MASTER_PORT never join each other; empty: TORCHELASTIC_RUN_ID when set.",
            s -> s);

    /** Where memory shared between processes lives. */
    public static final Setting<String> SHM_DIR = define("flexlink.shm.dir", "/dev/shm", "Directory (a tmpfs) of the "
            + "files through which the processes of one communicator share staging memory and counters; each file is "
            + "removed as soon as every rank has mapped it.", SettingParsers::pathText);

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
            SettingParsers.oneOf("auto", "off", "force"));

    /** Whether each communicator enqueues its auxiliary paths' work on a thread of its own. */
    public static final Setting<Boolean> ENQUEUE_THREAD = define("flexlink.enqueueThread", "off",
            "`on`: each communicator enqueues the auxiliary paths' part of a split call on a thread of its own, "
                    + "handed over when the call is launched and joined (on events) when the group ends, so that "
                    + "one thread driving several ranks gets their auxiliary enqueueing done in parallel; timed, "
                    + "captured and point-to-point calls stay on the calling thread. `off` (default): everything on "
                    + "the calling thread (docs/design.md).",
            SettingParsers.onOff());
    /** Whether a group's split calls hold their auxiliary paths' work until the whole group is enqueued. */
    public static final Setting<Boolean> GROUP_GATE = define("flexlink.groupGate", "off",
            "`on`: in a group of several communicators (one thread driving several ranks), the auxiliary paths' work "
                    + "of each split call waits on a word in host memory that the group's end writes once every call "
                    + "of the group is enqueued, so that none of it runs while the thread still enqueues the others "
                    + "(a wait in each path stream's first flag batch; captured calls are not held). `off` (default): "
                    + "each call's work starts as soon as it is enqueued (docs/design.md).",
            SettingParsers.onOff());

    // ---- data-parallel gradient buckets (io.flexlink.ddp) ----
    /** Most bytes of gradients per bucket of io.flexlink.ddp.GradientBuckets (after the first). */
    public static final Setting<Long> DDP_BUCKET_CAP = define("flexlink.ddp.bucketCap", "25M", "Gradient buckets "
            + "(io.flexlink.ddp): a bucket is closed once its gradients reach this many bytes (a larger single "
            + "gradient gets a bucket of its own); PyTorch DDP's `bucket_cap_mb`.",
            SettingParsers.bytesBetween(1, 1L << 40, ""));

    /** The cap of the first bucket, which is small so that the first AllReduce starts early in backward. */
    public static final Setting<Long> DDP_FIRST_BUCKET_CAP = define("flexlink.ddp.firstBucketCap", "1M", "Gradient "
            + "buckets: the cap of the first bucket (the last layers' gradients, ready first in backward), small so "
            + "that communication starts early.", SettingParsers.bytesBetween(1, 1L << 40, ""));

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

    private final SettingSources sources;
    /** Every setting's value, by {@link Setting#index}, once concluded; null before. */
    private volatile Object[] resolved;

    private FlexLinkConfig(SettingSources sources) {
        this.sources = sources;
    }

    private static <T> Setting<T> define(String property, String def, String doc, Function<String, T> parser) {
        Setting<T> s = new Setting<>(ALL.size(), property, def, doc, parser);
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

    /** A copy of this configuration with {@code setting} set to {@code value} (not concluded yet). */
    public FlexLinkConfig with(Setting<?> setting, String value) {
        return new FlexLinkConfig(sources.with(setting, value));
    }

    /**
     * Resolves and checks every setting now, once (later calls return at once): each value is parsed, then the
     * settings that depend on each other are checked together (a fixed share must name an enabled path). Every
     * problem found is reported in one INVALID_ARGUMENT naming each setting and its variable; returns this.
     */
    public FlexLinkConfig conclude() {
        if (resolved == null) {
            synchronized (this) {
                if (resolved == null) {
                    resolved = SettingResolution.resolve(ALL, this::raw);
                }
            }
        }
        return this;
    }

    /** The typed value of {@code setting} (concluding this configuration first if needed). */
    @SuppressWarnings("unchecked")
    public <T> T get(Setting<T> setting) {
        SettingSources.check(setting, "");
        Object[] v = resolved;
        if (v == null) {
            v = conclude().resolved;
        }
        return (T) v[setting.index];
    }

    /** The text of {@code setting} as found (override, property, environment or default), unparsed. */
    public String raw(Setting<?> setting) {
        return sources.raw(setting);
    }

    public String backend() {
        return get(BACKEND);
    }

    public List<String> paths() {
        return get(PATHS);
    }

    /** Fixed shares per auxiliary path; empty when the balancer chooses ({@code auto}). */
    public Map<String, Double> shares() {
        return get(SHARE);
    }

    /** The chunk and slot bytes; {@link #DEFAULT_CHUNK_BYTES} for {@code auto} ({@link #isAuto} tells). */
    public long chunkBytes() {
        long v = get(CHUNK_BYTES);
        return v == AUTO ? DEFAULT_CHUNK_BYTES : v;
    }

    /** Slots per producer; {@link #DEFAULT_SLOTS} for {@code auto}. */
    public int slots() {
        int v = get(SLOTS);
        return v == AUTO ? DEFAULT_SLOTS : v;
    }

    /** Whether {@code setting} ({@link #CHUNK_BYTES} or {@link #SLOTS}) is left to its {@code auto} rule. */
    public boolean isAuto(Setting<? extends Number> setting) {
        return get(setting).longValue() == AUTO;
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

    /** The prefix of the watchdog's flight recorder files, or null when it writes to the log only. */
    public java.nio.file.Path flightRecorder() {
        return SettingParsers.pathOrOff(get(FLIGHT_RECORDER));
    }

    /** The {@code flexlink.emulate} text (checked); {@link EmulatedLinks#parse} gives its links. */
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
        return SettingParsers.pathOrOff(get(TUNING_CACHE));
    }

    /** The secret of {@link #SECRET}, decoded; empty when unset. */
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

    /** Builds a configuration with explicit overrides. */
    public static final class Builder {
        private final Map<Setting<?>, String> overrides = new LinkedHashMap<>();
        private Function<String, String> env = System::getenv;

        /** Overrides {@code setting} with {@code value}; a null setting or value is INVALID_ARGUMENT. */
        public Builder set(Setting<?> setting, String value) {
            SettingSources.check(setting, value);
            overrides.put(setting, value);
            return this;
        }

        /** Replaces the process environment as the source of {@code FLEXLINK_*} variables. */
        public Builder environment(Map<String, String> environment) {
            if (environment == null) {
                throw new FlexLinkException(Result.INVALID_ARGUMENT, "configuration: environment: null");
            }
            Map<String, String> copy = new HashMap<>(environment);
            this.env = copy::get;
            return this;
        }

        public FlexLinkConfig build() {
            return new FlexLinkConfig(new SettingSources(overrides, env));
        }
    }
}
