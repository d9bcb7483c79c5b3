package io.flexlink.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.host.HostBackend;
import org.junit.jupiter.api.Test;

/** Two buffers in turn where another stream reads them; one buffer, and no second allocation, where none does. */
class AlternatingScratchTest {
    @Test
    void alternatesOnlyWhenAskedTo() {
        try (HostBackend backend = new HostBackend(FlexLinkConfig.builder().build())) {
            long before = backend.liveBytes();
            try (AlternatingScratch two = new AlternatingScratch(backend, 0, true)) {
                long a = two.next(4096);
                long b = two.next(4096);
                assertNotEquals(a, b);
                assertEquals(a, two.next(4096), "back to the first");
                assertEquals(before + 2 * 4096, backend.liveBytes());
            }
            try (AlternatingScratch one = new AlternatingScratch(backend, 0, false)) {
                long a = one.next(4096);
                assertEquals(a, one.next(4096));
                assertEquals(a, one.next(4096));
                assertEquals(before + 4096, backend.liveBytes(), "one buffer's bytes");
            }
            assertEquals(before, backend.liveBytes(), "both freed");
        }
    }
}
