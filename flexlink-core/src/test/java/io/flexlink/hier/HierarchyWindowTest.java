package io.flexlink.hier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Communicator;
import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.SignalWait;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * A multi-node communicator (two emulated nodes of two ranks) has no windows: NCCL's would span its node's
 * communicator and its rails, separate NCCL communicators. Arguments are checked first, then INVALID_USAGE says why.
 */
class HierarchyWindowTest {
    @Test
    void aMultiNodeCommunicatorRefusesWindowsSayingWhy() throws Exception {
        try (HostBackend backend = new HostBackend(HierarchyThreadsTest.BASE)) {
            Communicator[] world = HierarchyThreadsTest.make(backend, 2, 2, false);
            DeviceMemory mem = backend.allocate(world[0].device(), 4096);
            RuntimeStream stream = backend.createStream(world[0].device(), "user");
            try {
                Communicator c = world[0];
                refused(Result.INVALID_ARGUMENT, "address", () -> c.registerWindow(0, 64, 0));
                refused(Result.INVALID_ARGUMENT, "peer", () -> c.signal(4, 0, stream));
                refused(Result.INVALID_ARGUMENT, "waits[0].count", () -> c.waitSignal(stream, new SignalWait(1, 0, -1)));
                for (Executable call : List.<Executable>of(() -> c.registerWindow(mem.address(), 4096, 0),
                        () -> c.signal(3, 0, stream), () -> c.waitSignal(stream, new SignalWait(2, 0, 1)))) {
                    FlexLinkException e = assertThrows(FlexLinkException.class, call);
                    assertEquals(Result.INVALID_USAGE, e.result(), e.getMessage());
                    assertTrue(e.getMessage().contains("needs NCCL's path: this communicator has none (a multi-node "
                            + "communicator"), e.getMessage());
                }
                assertEquals(List.of(), c.windows());
                assertEquals(0, backend.enqueuedOps(stream), "nothing enqueued");
            } finally {
                for (Communicator c : world) {
                    c.close();
                }
                stream.close();
                mem.close();
            }
        }
    }

    private static void refused(Result result, String argument, Executable call) {
        FlexLinkException e = assertThrows(FlexLinkException.class, call);
        assertEquals(result, e.result(), e.getMessage());
        assertTrue(e.getMessage().contains(argument), e.getMessage());
    }
}
