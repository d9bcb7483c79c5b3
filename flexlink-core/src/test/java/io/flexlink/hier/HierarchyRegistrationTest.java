package io.flexlink.hier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Communicator;
import io.flexlink.FlexLinkException;
import io.flexlink.Registration;
import io.flexlink.Result;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.host.HostBackend;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A multi-node communicator (two emulated nodes of two ranks) registers with its node's communicator and its rail;
 * on the host backend neither has a transport registration (host ring, TCP rail), so it is FlexLink's record, and
 * its handles end with it.
 */
class HierarchyRegistrationTest {
    @Test
    void registersBelowAndEndsWithTheCommunicator() throws Exception {
        try (HostBackend backend = new HostBackend(HierarchyThreadsTest.BASE)) {
            Communicator[] world = HierarchyThreadsTest.make(backend, 2, 2, false);
            DeviceMemory[] mem = new DeviceMemory[world.length];
            try {
                assertInstanceOf(HierarchicalCommunicator.class, world[0]);
                Registration[] regs = new Registration[world.length];
                for (int r = 0; r < world.length; r++) {
                    mem[r] = backend.allocate(world[r].device(), 4096);
                    regs[r] = world[r].register(mem[r].address(), 4096);
                    assertFalse(regs[r].withPrimary(), "host ring and TCP rail keep no registration");
                    assertEquals(List.of(regs[r]), world[r].registrations());
                }
                FlexLinkException e = assertThrows(FlexLinkException.class, () -> world[0].register(0, 64));
                assertEquals(Result.INVALID_ARGUMENT, e.result(), e.getMessage());
                assertTrue(e.getMessage().contains("address"), e.getMessage());
                regs[0].close();
                regs[0].close();
                assertEquals(List.of(), world[0].registrations());
                for (Communicator c : world) {
                    c.close();
                }
                for (int r = 1; r < world.length; r++) {
                    assertTrue(regs[r].isClosed(), "rank " + r + " deregistered at close");
                }
            } finally {
                for (Communicator c : world) {
                    c.close();
                }
                for (DeviceMemory m : mem) {
                    if (m != null) {
                        m.close();
                    }
                }
            }
        }
    }
}
