package io.flexlink.balance;

import io.flexlink.Collective;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.ReduceOp;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeEvent;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
import java.util.Locale;

/** Drives 4 host ranks with emulated link speeds and reports time per call, bus bandwidth and shares. */
final class EmulatedLinks implements AutoCloseable {
    final HostBackend backend;
    final Communicator[] comms;
    final RuntimeStream[] streams;
    final DeviceMemory[] send;
    final DeviceMemory[] recv;
    final RuntimeEvent[] start;
    final RuntimeEvent[] end;
    final Collective collective;
    final long count;

    EmulatedLinks(String emulate, String share, Collective collective, long bytes, int ranks, String extra) {
        FlexLinkConfig.Builder b = FlexLinkConfig.builder()
                .set(FlexLinkConfig.EMULATE, emulate)
                .set(FlexLinkConfig.SHARE, share)
                .set(FlexLinkConfig.CHUNK_BYTES, "256K")
                .set(FlexLinkConfig.BALANCE_WINDOW, "2")
                .set(FlexLinkConfig.MIN_SPLIT_BYTES, "64K")
                .set(FlexLinkConfig.TUNING_CACHE, "off");
        if (extra != null) {
            for (String kv : extra.split(";")) {
                String[] p = kv.split("=", 2);
                for (io.flexlink.config.Setting<?> s : FlexLinkConfig.settings()) {
                    if (s.property().equals(p[0])) {
                        b.set(s, p[1]);
                    }
                }
            }
        }
        FlexLinkConfig config = b.build();
        this.backend = new HostBackend(config);
        int[] devices = new int[ranks];
        for (int r = 0; r < ranks; r++) {
            devices[r] = r;
        }
        this.comms = FlexLink.initAll(backend, config, devices);
        this.collective = collective;
        long per = collective == Collective.ALL_GATHER || collective == Collective.REDUCE_SCATTER ? bytes / ranks : bytes;
        this.count = per / 4;
        streams = new RuntimeStream[ranks];
        send = new DeviceMemory[ranks];
        recv = new DeviceMemory[ranks];
        start = new RuntimeEvent[ranks];
        end = new RuntimeEvent[ranks];
        for (int r = 0; r < ranks; r++) {
            streams[r] = backend.createStream(r, "user.r" + r);
            long in = collective == Collective.REDUCE_SCATTER ? count * ranks * 4 : count * 4;
            long out = collective == Collective.ALL_GATHER ? count * ranks * 4 : count * 4;
            send[r] = backend.allocate(r, in);
            recv[r] = backend.allocate(r, out);
            backend.fill(send[r].address(), in, (byte) 1);
            start[r] = backend.createEvent(r, true);
            end[r] = backend.createEvent(r, true);
        }
    }

    /** Runs one call on every rank; returns its time in seconds (max over ranks). */
    double call() {
        for (int r = 0; r < comms.length; r++) {
            streams[r].record(start[r]);
            io.flexlink.testing.CollectiveHarness.enqueue(collective, comms[r], send[r].address(), recv[r].address(),
                    count, DataType.FLOAT32, ReduceOp.SUM, 0, streams[r]);
            streams[r].record(end[r]);
        }
        double t = 0;
        for (int r = 0; r < comms.length; r++) {
            streams[r].synchronize();
            t = Math.max(t, end[r].elapsedMillis(start[r]) / 1e3);
        }
        return t;
    }

    long busBytes() {
        long bytes = collective == Collective.ALL_GATHER ? count * 4 * comms.length : count * 4;
        return (long) (bytes * collective.busFactor(comms.length));
    }

    double share() {
        long bytes = collective == Collective.ALL_GATHER ? count * 4 * comms.length : count * 4;
        int ch = SizeBuckets.channel(collective, bytes);
        java.util.Map<String, java.util.Map<String, Double>> table = comms[0].stats().shares();
        if (table.isEmpty()) {
            return Double.NaN;
        }
        java.util.Map<String, Double> m = table.get(SizeBuckets.label(ch));
        return m == null ? 0 : m.get("pcie");
    }

    BucketTuner.Stage stage() {
        long bytes = collective == Collective.ALL_GATHER ? count * 4 * comms.length : count * 4;
        String s = comms[0].stats().stages().get(SizeBuckets.label(SizeBuckets.channel(collective, bytes)));
        return s == null ? null : BucketTuner.Stage.valueOf(s);
    }

    @Override
    public void close() {
        for (int r = 0; r < comms.length; r++) {
            comms[r].close();
            streams[r].close();
            send[r].close();
            recv[r].close();
        }
        backend.close();
    }

    public static void main(String[] args) {
        for (String emu : new String[] {"off", "primary:200MB/s,pcie:50MB/s"}) {
            for (String share : new String[] {"pcie=0", "pcie=0.2", "pcie=1"}) {
                try (EmulatedLinks e = new EmulatedLinks(emu, share, Collective.ALL_REDUCE, 16 << 20, 4, null)) {
                    e.call();
                    double best = 1e9;
                    for (int i = 0; i < 5; i++) {
                        best = Math.min(best, e.call());
                    }
                    System.out.printf(Locale.ROOT, "%-30s %-10s %8.2f ms  busbw %.1f MB/s%n", emu, share, best * 1e3,
                            e.busBytes() / best / 1e6);
                }
            }
        }
    }
}
