package io.flexlink.cuda.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.PinnedMemory;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
import org.junit.jupiter.api.Test;

/** The timing harnesses' gate, on the host backend: streams wait for the whole enqueue, and go even if it fails. */
class HostGateTest {
    @Test
    void streamsRunNothingUntilTheEnqueueEndsAndGoWhenItThrows() {
        try (HostBackend host = new HostBackend(FlexLinkConfig.builder().build());
             PinnedMemory word = host.allocatePinned(64); HostGate gate = new HostGate(host)) {
            RuntimeStream a = host.createStream(0, "gate.a");
            RuntimeStream b = host.createStream(0, "gate.b");
            try {
                gate.hold(() -> {
                    a.writeValue32(word, 0, 1);
                    b.writeValue32(word, 4, 2);
                    // both streams are held: nothing they were given has run while the enqueue goes on
                    assertFalse(a.isIdle() || b.isIdle(), "held");
                    assertEquals(0, word.readCounter(0) + word.readCounter(4), "nothing ran yet");
                }, a, b);
                a.synchronize();
                b.synchronize();
                assertEquals(1, word.readCounter(0));
                assertEquals(2, word.readCounter(4));
                assertThrows(IllegalStateException.class, () -> gate.hold(() -> {
                    a.writeValue32(word, 0, 3);
                    throw new IllegalStateException("enqueue failed");
                }, a, b));
                a.synchronize(); // released all the same: a second hold's value, not the first's
                b.synchronize();
                assertEquals(3, word.readCounter(0));
                assertTrue(a.isIdle() && b.isIdle());
            } finally {
                a.close();
                b.close();
            }
        }
    }
}
