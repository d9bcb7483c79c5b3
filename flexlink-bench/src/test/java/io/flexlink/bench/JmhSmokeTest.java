package io.flexlink.bench;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.bench.jmh.CollectiveBenchmark;
import io.flexlink.bench.jmh.SteadyStateCallBenchmark;
import java.util.Collection;
import org.junit.jupiter.api.Test;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/** Runs the JMH benchmarks briefly, at the smallest size, in one forked JVM each (as they are meant to run). */
class JmhSmokeTest {
    @Test
    void collectiveBenchmarkReportsBandwidth() throws Exception {
        Options opt = new OptionsBuilder()
                .include(CollectiveBenchmark.class.getName() + ".collective")
                .param("size", "1M")
                .param("collective", "all_reduce")
                .forks(1)
                .warmupIterations(1)
                .warmupTime(TimeValue.milliseconds(100))
                .measurementIterations(1)
                .measurementTime(TimeValue.milliseconds(100))
                .shouldFailOnError(true)
                .build();
        Collection<RunResult> results = new Runner(opt).run();
        assertFalse(results.isEmpty());
        for (RunResult r : results) {
            assertTrue(r.getPrimaryResult().getScore() > 0, r.getParams().toString());
            Result<?> busbw = r.getSecondaryResults().get("busbw");
            Result<?> algbw = r.getSecondaryResults().get("algbw");
            assertTrue(busbw != null && busbw.getScore() > 0, r.getSecondaryResults().toString());
            assertTrue(algbw != null && algbw.getScore() > 0, r.getSecondaryResults().toString());
        }
    }

    @Test
    void steadyStateCallRuns() throws Exception {
        Options opt = new OptionsBuilder()
                .include(SteadyStateCallBenchmark.class.getName())
                .forks(1)
                .warmupIterations(1)
                .warmupTime(TimeValue.milliseconds(100))
                .measurementIterations(1)
                .measurementTime(TimeValue.milliseconds(100))
                .shouldFailOnError(true)
                .build();
        Collection<RunResult> results = new Runner(opt).run();
        assertFalse(results.isEmpty());
        assertTrue(results.iterator().next().getPrimaryResult().getScore() > 0);
    }
}
