package io.flexlink.comm;

import static io.flexlink.testing.Downloads.download;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.FlexLinkException;
import io.flexlink.ReduceOp;
import io.flexlink.Result;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
import io.flexlink.runtime.host.HostFaults;
import io.flexlink.testing.EventTrace;
import io.flexlink.testing.FailingPrimary;
import io.flexlink.testing.MaxThenSum;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * One communicator's calls of a group on several streams behave as NCCL's: the group's work waits for what each of
 * its streams held before it, and each stream continues only after all of the group's work. Each rank has a stream
 * {@code S} for collectives and {@code T} for its sends and receives (and a second collective stream in the chained
 * case); work is slowed where a missing wait would let a stream run ahead (perturbations only: with the waits in
 * place the results do not depend on them). Outputs are poisoned first; every element is checked.
 */
class MultiStreamGroupTest {
    private static final int N = 4096;

    private static FlexLinkConfig config(String paths) {
        FlexLinkConfig.Builder b = FlexLinkConfig.builder().set(FlexLinkConfig.PATHS, paths)
                .set(FlexLinkConfig.MIN_SPLIT_BYTES, "0").set(FlexLinkConfig.CHUNK_BYTES, "4K")
                .set(FlexLinkConfig.TUNING_CACHE, "off");
        return paths.contains("primary") ? b.set(FlexLinkConfig.SHARE, "pcie=0.5").build() : b.build();
    }

    /** Slows the PCIe path's receives, and copies on the transfer streams ({@code user.t*}). */
    private static final HostFaults SLOW = (label, op) -> {
        if (op == HostFaults.Op.COPY && (label.startsWith("pcie.recv") || label.startsWith("user.t"))) {
            Thread.sleep(label.startsWith("user.t") ? 20 : 1);
        }
        return HostFaults.Action.RUN;
    };

    @ParameterizedTest(name = "paths {0}")
    @ValueSource(strings = {"pcie", "primary,pcie"})
    void theGroupWaitsForWhatItsStreamsHeldAndTheyWaitForTheGroup(String paths) {
        FlexLinkConfig config = config(paths);
        try (HostBackend host = new HostBackend(config, SLOW)) {
            Communicator[] comms = FlexLink.initAll(host, config, 0, 1);
            RuntimeStream[] s = {host.createStream(0, "user.s0"), host.createStream(1, "user.s1")};
            RuntimeStream[] t = {host.createStream(0, "user.t0"), host.createStream(1, "user.t1")};
            DeviceMemory[] g = new DeviceMemory[2];
            DeviceMemory[] fresh = new DeviceMemory[2];
            DeviceMemory[] moved = new DeviceMemory[2];
            DeviceMemory[] after = new DeviceMemory[2];
            try {
                for (int r = 0; r < 2; r++) {
                    g[r] = host.allocate(r, N * 4L);
                    fresh[r] = host.allocate(r, N * 4L);
                    moved[r] = host.allocate(r, N * 4L);
                    after[r] = host.allocate(r, N * 4L);
                    host.upload(g[r].address(), ints(r, 0)); // stale: the group must not see these
                    host.upload(fresh[r].address(), ints(r, 1));
                    host.fill(moved[r].address(), N * 4L, (byte) 0xA5);
                    host.fill(after[r].address(), N * 4L, (byte) 0xA5);
                    t[r].copy(g[r].address(), fresh[r].address(), N * 4L); // held on T before the group (slowed)
                }
                FlexLink.groupStart();
                try {
                    for (int r = 0; r < 2; r++) {
                        comms[r].allReduce(g[r].address(), g[r].address(), N, DataType.INT32, ReduceOp.SUM, s[r]);
                    }
                    comms[0].send(fresh[0].address(), N, DataType.INT32, 1, t[0]);
                    comms[1].recv(moved[1].address(), N, DataType.INT32, 0, t[1]);
                } finally {
                    FlexLink.groupEnd();
                }
                for (int r = 0; r < 2; r++) {
                    t[r].copy(after[r].address(), g[r].address(), N * 4L); // after the group, on T: the sum
                    t[r].synchronize();
                }
                ByteBuffer want = sum(ints(0, 1), ints(1, 1));
                for (int r = 0; r < 2; r++) {
                    assertEquals(want, download(host, after[r]), "rank " + r + ": the sum, read on T after the group");
                    s[r].synchronize();
                    assertEquals(want, download(host, g[r]), "rank " + r + ": the sum of what T wrote before it");
                }
                assertEquals(ints(0, 1), download(host, moved[1]), "rank 0's transfer");
            } finally {
                for (Communicator c : comms) {
                    c.close();
                }
                for (int r = 0; r < 2; r++) {
                    s[r].close();
                    t[r].close();
                    for (DeviceMemory m : new DeviceMemory[] {g[r], fresh[r], moved[r], after[r]}) {
                        if (m != null) {
                            m.close();
                        }
                    }
                }
            }
        }
    }

    @ParameterizedTest(name = "paths {0}")
    @ValueSource(strings = {"pcie", "primary,pcie"})
    void dependentCollectivesOnTwoStreamsRunInCallOrder(String paths) {
        FlexLinkConfig config = config(paths);
        try (HostBackend host = new HostBackend(config, SLOW)) {
            Communicator[] comms = FlexLink.initAll(host, config, 0, 1);
            RuntimeStream[] first = {host.createStream(0, "user.s0"), host.createStream(1, "user.s1")};
            RuntimeStream[] second = {host.createStream(0, "user.u0"), host.createStream(1, "user.u1")};
            DeviceMemory[] buf = {host.allocate(0, N * 4L), host.allocate(1, N * 4L)};
            try {
                assertEquals(0, MaxThenSum.run(host, comms, first, second, buf, N, 2), "MAX, then SUM of the maxima");
            } finally {
                for (Communicator c : comms) {
                    c.close();
                }
                for (int r = 0; r < 2; r++) {
                    first[r].close();
                    second[r].close();
                    buf[r].close();
                }
            }
        }
    }

    @Test
    void aGroupThatFailedLeavesItsStreamsAloneAfterwards() {
        FlexLinkConfig config = config("primary,pcie");
        AtomicInteger failures = new AtomicInteger(2); // each rank's first primary AllReduce, in the group
        try (HostBackend host = new HostBackend(config)) {
            EventTrace traced = new EventTrace(host);
            Communicator[] comms = FlexLink.initAll(new FailingPrimary(traced, failures), config, 0, 1);
            RuntimeStream[][] s = new RuntimeStream[2][3];
            DeviceMemory[] buf = {host.allocate(0, N * 4L), host.allocate(1, N * 4L)};
            try {
                for (int r = 0; r < 2; r++) {
                    for (int k = 0; k < 3; k++) {
                        s[r][k] = traced.createStream(r, "user." + k + ".r" + r);
                    }
                }
                FlexLink.groupStart();
                for (int r = 0; r < 2; r++) {
                    comms[r].allReduce(buf[r].address(), buf[r].address(), N, DataType.INT32, ReduceOp.SUM, s[r][0]);
                    comms[r].allReduce(buf[r].address(), buf[r].address(), N, DataType.INT32, ReduceOp.MAX, s[r][1]);
                }
                FlexLinkException e = assertThrows(FlexLinkException.class, FlexLink::groupEnd);
                assertEquals(Result.UNHANDLED_CUDA_ERROR, e.result());
                int before = traced.ops().size();
                for (int r = 0; r < 2; r++) {
                    comms[r].allReduce(buf[r].address(), buf[r].address(), N, DataType.INT32, ReduceOp.SUM, s[r][2]);
                }
                for (int r = 0; r < 2; r++) {
                    s[r][2].synchronize();
                }
                List<EventTrace.Op> after = traced.ops().subList(before, traced.ops().size());
                assertTrue(after.stream().anyMatch(o -> o.stream().startsWith("user.2")), "the next call forks, joins");
                assertTrue(after.stream().noneMatch(o -> o.stream().matches("user\\.[01]\\..*")),
                        "nothing of the next call touches the failed group's streams: " + after);
            } finally {
                for (Communicator c : comms) {
                    c.close();
                }
                for (int r = 0; r < 2; r++) {
                    for (RuntimeStream x : s[r]) {
                        if (x != null) {
                            x.close();
                        }
                    }
                    buf[r].close();
                }
            }
        }
    }

    private static ByteBuffer ints(int rank, int version) {
        ByteBuffer b = ByteBuffer.allocateDirect(N * 4).order(ByteOrder.nativeOrder());
        for (int i = 0; i < N; i++) {
            b.putInt(4 * i, (rank * 1_000_003 + i * 7 + version * 13) % 100_000 - 50_000);
        }
        return b;
    }

    private static ByteBuffer sum(ByteBuffer x, ByteBuffer y) {
        ByteBuffer b = ByteBuffer.allocateDirect(N * 4).order(ByteOrder.nativeOrder());
        for (int i = 0; i < N; i++) {
            b.putInt(4 * i, x.getInt(4 * i) + y.getInt(4 * i));
        }
        return b;
    }
}
