package io.flexlink.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.flexlink.cuda.matrix.GpuMatrix;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The exhaustive differential matrix (every combination, see {@link GpuMatrix}), on the GPUs of this host. */
@Tag("gpu")
class GpuMatrixGpuTest {
    @Test
    void everyCollectiveTypeOpCountPlaceAndRankLayoutIsExact() {
        try (CudaBackend backend = GpuTests.open()) {
            GpuMatrix.Summary s = GpuMatrix.run(backend, List.of(), System.out);
            assertEquals(List.of(), s.failed().subList(0, (int) Math.min(20, s.failures())),
                    s.failures() + " of " + s.cases() + " cases wrong");
            assertEquals(0, s.failures());
        }
    }
}
