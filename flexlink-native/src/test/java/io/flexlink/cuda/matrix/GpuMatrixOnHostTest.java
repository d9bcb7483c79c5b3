package io.flexlink.cuda.matrix;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.host.HostBackend;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The GPU matrix's own logic (data, references, checks), run on the host backend with small counts: it must
 * pass where the engine is right, and it must see an output nobody wrote.
 */
class GpuMatrixOnHostTest {
    @Test
    void theMatrixPassesOnTheHostBackendAndReportsEveryCase() {
        FlexLinkConfig config = FlexLinkConfig.builder().set(FlexLinkConfig.CHUNK_BYTES, "4K").build();
        try (HostBackend backend = new HostBackend(config)) {
            ByteArrayOutputStream log = new ByteArrayOutputStream();
            GpuMatrix.Summary s = GpuMatrix.run(backend, List.of("1rank-pcie0.37", "2ranks-gpu0", "4ranks-gpu0"),
                    new long[] {1, 7, 4099}, new PrintStream(log, true, StandardCharsets.UTF_8));
            assertEquals(List.of(), s.failed());
            // 20 collective-op pairs x 12 types x 3 counts x 2 places per configuration
            assertEquals(3L * 20 * 12 * 3 * 2, s.cases());
            String text = log.toString(StandardCharsets.UTF_8);
            assertTrue(text.contains("4ranks-gpu0 REDUCE_SCATTER FLOAT8E5M2 AVG 4099 in-place: OK"), text.substring(0, 200));
        }
    }

    @Test
    void aCollectiveThatWritesNothingIsCaught() {
        java.nio.ByteBuffer want = MatrixData.reduced(io.flexlink.DataType.FLOAT32, io.flexlink.ReduceOp.SUM, 2, 64);
        java.nio.ByteBuffer got = MatrixData.buffer(64 * 4);
        for (int i = 0; i < 64 * 4; i++) {
            got.put(i, (byte) 0xA5);
        }
        assertTrue(got.duplicate().mismatch(want.duplicate()) >= 0, "the poison never equals a result");
        // element 0: rank 0 holds -2, rank 1 holds 1
        assertEquals(MatrixData.bits(io.flexlink.DataType.FLOAT32, -1),
                MatrixData.reduced(io.flexlink.DataType.FLOAT32, io.flexlink.ReduceOp.SUM, 2, 0,
                        MatrixData.table(io.flexlink.DataType.FLOAT32)));
    }
}
