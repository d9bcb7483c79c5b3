package io.flexlink.hier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.CommStats;
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
}
