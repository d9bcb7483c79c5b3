package io.flexlink.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.flexlink.DataType;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.PinnedMemory;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What -z does between calls, seen on the stream: each call writes a done mark on its rank's stream, and the
 * next call reads the mark of the one before. With -z 1, 2 and 3 (one call per iteration) the loop waited for
 * the stream after every call, so every earlier mark is written. With -z 0 each call's work is held back
 * by a gate that only the last call opens: the loop reaching every call at all shows that it never waited,
 * and every mark before the last is still unwritten when the next call comes.
 */
class TimedLoopBlockingTest {
    static final int ITERS = 6;

    @ParameterizedTest(name = "-z {0}")
    @ValueSource(ints = {0, 1, 2, 3})
    void theLoopWaitsBetweenCallsExactlyWhenTheBlockingModeSaysSo(int blocking) {
        FlexLinkConfig config = FlexLinkConfig.builder().set(FlexLinkConfig.BACKEND, "host").build();
        try (HostBackend backend = new HostBackend(config)) {
            Workspace.StreamSource streams = GatedMarkingTarget.hostStreams(backend);
            try (Workspace ws = new Workspace(backend, streams, new int[] {0}, 4096, 0, 0, RankLayout.whole(1));
                 DriverThreads threads = new DriverThreads(1, 1, null);
                 PinnedMemory marks = backend.allocatePinned(4L * ITERS);
                 PinnedMemory gate = backend.allocatePinned(4)) {
                PerfOptions o = new PerfOptions();
                o.blocking = blocking;
                o.aggIters = 1; // picocli gives the defaults; a bare PerfOptions has 0
                CallSpec call = new CallSpec(PerfCollective.ALL_REDUCE,
                        PerfCollective.ALL_REDUCE.shape(1024, DataType.FLOAT32, 1), DataType.FLOAT32, PerfOp.SUM, -1, ws);
                ws.layout(call.shape, false);
                MarkingTarget target = new MarkingTarget(ws, marks, blocking == 0 ? gate : null, backend);
                try (target) {
                    assertTimeoutPreemptively(Duration.ofSeconds(60), // a wait on a closed gate would never return
                            () -> new TimedLoop(o, new StreamWait(ws, 0), threads).run(target, call, 0, ITERS));
                }
                int expected = blocking == 0 ? 0 : 1;
                for (int k = 1; k < ITERS; k++) {
                    assertEquals(expected, target.previousMark.get(k - 1), "call " + k + " saw call " + (k - 1)
                            + "'s mark as " + target.previousMark.get(k - 1) + ": " + target.previousMark);
                }
                for (int k = 0; k < ITERS; k++) {
                    assertEquals(1, marks.readCounter(4L * k), "the loop's last wait waited for call " + k);
                }
            }
        }
    }

    /** One rank's calls as done marks on its stream, each behind the gate when there is one. */
    private static final class MarkingTarget extends GatedMarkingTarget {
        final List<Integer> previousMark = new ArrayList<>();
        int calls;

        MarkingTarget(Workspace ws, PinnedMemory marks, PinnedMemory gate, HostBackend backend) {
            super(ws, marks, gate, backend);
        }

        @Override
        public void enqueue(CallSpec call, int from, int to, int iter) {
            RuntimeStream s = ws.stream(0);
            int k = calls++;
            if (k > 0) {
                previousMark.add(marks.readCounter(4L * (k - 1)));
            }
            if (gate != null) {
                s.waitValue32(gate, 0, 1);
            }
            s.writeValue32(marks, 4L * k, 1);
            if (gate != null && k == ITERS - 1) {
                opener.writeValue32(gate, 0, 1); // another stream opens it: the loop's own waits could not
            }
        }
    }
}
