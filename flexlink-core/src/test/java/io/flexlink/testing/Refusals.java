package io.flexlink.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
import org.junit.jupiter.api.function.Executable;

/** The rule for bad input, asserted: a FlexLinkException with NCCL's code, naming the argument, nothing enqueued. */
public final class Refusals {
    private Refusals() {
    }

    /** Asserts {@code call} fails with {@code result}, names {@code argument}, and enqueued nothing on {@code stream}. */
    public static void refused(HostBackend backend, RuntimeStream stream, Result result, String argument,
                               Executable call) {
        long before = backend.enqueuedOps(stream);
        FlexLinkException e = assertThrows(FlexLinkException.class, call);
        assertEquals(result, e.result(), e.getMessage());
        assertTrue(e.getMessage().contains(argument), "message names " + argument + ": " + e.getMessage());
        assertEquals(before, backend.enqueuedOps(stream), "nothing enqueued");
    }
}
