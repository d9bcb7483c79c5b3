package io.flexlink.hier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Collective;
import io.flexlink.CommStats;
import io.flexlink.DataType;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The stage timer on the host backend: which boundaries a call records decides what each stage is timed from. */
class StageTimerTest {
    private static List<CommStats.PathTotals> run(int[] stagesRecorded, long[] bytes, double[] wallSeconds) {
        try (HostBackend backend = new HostBackend(FlexLinkConfig.builder().set(FlexLinkConfig.BACKEND, "host").build());
             StageTimer timer = new StageTimer(backend, 0)) {
            RuntimeStream stream = backend.createStream(0, "stages");
            try {
                long t0 = System.nanoTime();
                timer.begin(stream);
                for (int i = 0; i < stagesRecorded.length; i++) {
                    timer.stage(stream, stagesRecorded[i], bytes[i]);
                }
                timer.end();
                stream.synchronize();
                wallSeconds[0] = (System.nanoTime() - t0) / 1e9;
                return timer.totals();
            } finally {
                stream.close();
            }
        }
    }

    @Test
    void aCallThatRecordsOnlyItsLastBoundaryTimesThatStageFromTheCallsStart() {
        double[] wall = new double[1];
        // the pipelined AllReduce: its stages overlap, only the end of the last one is recorded
        List<CommStats.PathTotals> t = run(new int[] {2}, new long[] {4096}, wall);
        CommStats.PathTotals post = t.get(2);
        assertEquals(1, post.calls());
        assertEquals(4096, post.bytes());
        assertEquals(1, post.timedCalls());
        assertTrue(post.seconds() >= 0 && post.seconds() <= wall[0],
                "intra.post took " + post.seconds() + " s in a call of " + wall[0] + " s");
        assertEquals(0, t.get(0).timedCalls());
        assertEquals(0, t.get(1).timedCalls());
    }

    @Test
    void aStageThatDidNothingIsCountedNeitherAsACallNorAsTime() {
        double[] wall = new double[1];
        List<CommStats.PathTotals> t = run(new int[] {0, 1, 2}, new long[] {-1, 512, 1024}, wall);
        assertEquals(0, t.get(0).calls());
        assertEquals(0, t.get(0).timedCalls());
        assertEquals(1, t.get(1).timedCalls());
        assertEquals(512, t.get(1).bytes());
        assertEquals(1024, t.get(2).bytes());
        double sum = t.get(1).seconds() + t.get(2).seconds();
        assertTrue(sum >= 0 && sum <= wall[0], "stages took " + sum + " s in a call of " + wall[0] + " s");
    }

    /** One call through a timer that reports rail times: the node calls it noted, and what they heard. */
    private static List<String> railTimesHeard(boolean overlapped, double[] railSeconds) {
        List<String> heard = new java.util.ArrayList<>();
        StageTimer.Outside sink = (c, count, type, seconds) -> heard.add(c + " " + count + " " + type + " " + seconds);
        try (HostBackend backend = new HostBackend(FlexLinkConfig.builder().set(FlexLinkConfig.BACKEND, "host").build());
             StageTimer timer = new StageTimer(backend, 0, sink)) {
            RuntimeStream stream = backend.createStream(0, "stages");
            try {
                timer.begin(stream);
                timer.nodeCall(0, Collective.REDUCE_SCATTER, 1000, DataType.FLOAT32);
                if (!overlapped) {
                    timer.stage(stream, 0, 4000);
                    timer.stage(stream, 1, 1000);
                }
                timer.nodeCall(2, Collective.ALL_GATHER, 1000, DataType.FLOAT32);
                timer.stage(stream, 2, 4000);
                timer.end();
                stream.synchronize();
                List<CommStats.PathTotals> t = timer.totals(); // reads the completed call
                railSeconds[0] = t.get(1).seconds();
                return heard;
            } finally {
                stream.close();
            }
        }
    }

    @Test
    void aTimedRailStageIsHandedToTheNodeCallsOfItsCall() {
        double[] rail = new double[1];
        List<String> heard = railTimesHeard(false, rail);
        float r = (float) rail[0];
        assertEquals(List.of("REDUCE_SCATTER 1000 FLOAT32 " + r, "ALL_GATHER 1000 FLOAT32 " + r), heard,
                "both node stages hear the rail stage's own time");
    }

    @Test
    void overlappedStagesHandNoRailTimeToTheNode() {
        // the pipelined AllReduce records only its last boundary: no stage is the rail's alone
        assertEquals(List.of(), railTimesHeard(true, new double[1]));
    }
}
