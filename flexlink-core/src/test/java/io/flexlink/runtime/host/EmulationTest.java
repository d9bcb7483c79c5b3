package io.flexlink.runtime.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class EmulationTest {
    @Test
    void parsesRatesAndLatencies() {
        Emulation e = Emulation.parse(" primary:400MB/s , PCIe:1.5GB/s@50us,nvshmem:2e3KBps@1ms ");
        assertEquals(2_500_000, e.link("primary").nanos(1_000_000));          // 1 MB at 400 MB/s
        assertEquals(2_000_000 + 50_000, e.link("pcie").nanos(3_000_000));    // 3 MB at 1.5 GB/s, + 50 us
        assertEquals(500_000 + 1_000_000, e.link("nvshmem").nanos(1_000));    // 1 KB at 2 MB/s, + 1 ms
        assertEquals(0, Emulation.parse("pcie:1kb/s@0ns").link("pcie").latencyNanos);
    }

    @Test
    void offAndEmptyThrottleNothing() {
        assertSame(Emulation.OFF, Emulation.parse("off"));
        assertSame(Emulation.OFF, Emulation.parse(" "));
        assertSame(Emulation.OFF, Emulation.parse(null));
        assertNull(Emulation.parse("pcie:1MB/s").link("primary"));
        assertNotNull(Emulation.parse("pcie:1MB/s").link("pcie"));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', quoteCharacter = '"', value = {
        "pcei:1KB/s,primray:1KB/s | unknown path 'pcei'",
        "board:1MB/s              | unknown path 'board'",
        "pcie:1MB/s,pcie:2MB/s    | path 'pcie' is given twice",
        "pcie:1XB/s               | rate '1XB/s'",
        "pcie:100MB               | rate '100MB'",
        "pcie:fastMB/s            | rate 'fastMB/s'",
        "pcie:MB/s                | rate 'MB/s'",
        "pcie:0MB/s               | rate '0MB/s' must be positive",
        "pcie:-5MB/s              | rate '-5MB/s' must be positive",
        "pcie:1MB/s@5s            | latency '5s'",
        "pcie:1MB/s@-1us          | latency '-1us' must not be negative",
        "pcie:1MB/s@1us@2us       | expected path:rate[@latency], got 'pcie:1MB/s@1us@2us'",
        "pcie                     | expected path:rate[@latency], got 'pcie'",
        "pcie:1MB/s,              | expected path:rate[@latency], got ''",
    })
    void rejectsWithTheBadTokenNamed(String spec, String why) {
        FlexLinkException e = assertThrows(FlexLinkException.class, () -> Emulation.parse(spec));
        assertEquals(Result.INVALID_ARGUMENT, e.result());
        assertTrue(e.detail().startsWith("flexlink.emulate: "), e.detail());
        assertTrue(e.detail().contains(why), e.detail());
        assertTrue(e.detail().contains("(in '" + spec + "')"), e.detail());
    }
}
