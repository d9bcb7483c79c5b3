package io.flexlink.cuda;

import static org.bytedeco.cuda.global.cudart.cudaStreamDefault;
import static org.bytedeco.cuda.global.cudart.cudaStreamNonBlocking;

import io.flexlink.cuda.facade.GraphProgram;
import io.flexlink.cuda.facade.NcclProgram;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The bytedeco-style program of {@link NcclProgram}, run through the facade. */
@Tag("gpu")
class FlexNcclGpuTest {
    @BeforeAll
    static void needsCuda() {
        GpuTests.assumeCuda();
    }

    @Test
    void oneRankEveryCall() {
        NcclProgram.oneRank((1 << 20) + 5);
    }

    @Test
    void uniqueIdAndInitRank() {
        NcclProgram.initRank(1000);
    }

    @Test
    void initAllOneDevice() {
        NcclProgram.initAll(new int[] {0}, 4096);
    }

    /** Issue #19's program: a grouped ncclAllReduce of 4M floats captured (global mode), replayed 20 times. */
    @Test
    void aCapturedAllReduceReplaysOnOneRankWithDefaultSettings() {
        GraphProgram.captureAndReplay(new int[] {0}, 4 << 20, 20);
    }

    /**
     * Two ranks on GPU 0 (the PCIe path), each stream's first FlexLink call inside the capture: asking a
     * capturing stream's device in global mode used to invalidate the capture.
     */
    @Test
    void aCapturedAllReduceOfTwoRanksReplaysWhenTheCaptureIsTheStreamsFirstCall() {
        GraphProgram.captureAndReplay(new int[] {0, 0}, 4 << 20, 20, cudaStreamDefault, false);
    }

    /** The same on non-blocking streams, after an eager call on them: eager and captured calls interleave. */
    @Test
    void aCapturedAllReduceOfTwoRanksReplaysAfterAnEagerCallOnNonBlockingStreams() {
        GraphProgram.captureAndReplay(new int[] {0, 0}, 4 << 20, 20, cudaStreamNonBlocking, true);
    }

    @Test
    void initAllTwoRanksOnOneGpu() {
        NcclProgram.initAll(new int[] {0, 0}, 300_001);
    }
}
