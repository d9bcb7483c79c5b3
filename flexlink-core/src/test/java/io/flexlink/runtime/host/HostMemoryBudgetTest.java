package io.flexlink.runtime.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.PinnedMemory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The host backend refuses allocations the machine cannot hold, before touching a page, instead of being
 * killed by the kernel while zero-filling them (Linux overcommits: 27 GB of malloc succeed on 24 GB).
 * The machine is a probe here, scaled down: 64 MiB available stands for 24 GB, eight 8 MiB buffers for
 * eight ranks' 3 GiB all-gather buffers.
 */
class HostMemoryBudgetTest {
    private static final long MIB = 1L << 20;
    private static final FlexLinkConfig CONFIG = FlexLinkConfig.builder().build();

    private static HostBackend backendOn(HostMemoryProbe probe) {
        return new HostBackend(CONFIG, null, new HostMemoryBudget(probe));
    }

    @Test
    void buffersBeyondWhatTheMachineHoldsAreRefusedWithSystemError() {
        try (HostBackend backend = backendOn(() -> 64 * MIB)) {
            List<DeviceMemory> held = new ArrayList<>();
            for (int r = 0; r < 7; r++) {
                held.add(backend.allocate(r, 8 * MIB)); // 56 MiB: within 64 less the margin (4 MiB)
            }
            FlexLinkException e = assertThrows(FlexLinkException.class, () -> backend.allocate(7, 8 * MIB));
            assertEquals(Result.SYSTEM_ERROR, e.result());
            assertTrue(e.getMessage().contains("out of memory: 8388608 bytes asked for")
                    && e.getMessage().contains("56.0 MiB allocated already")
                    && e.getMessage().contains("can hold about 64.0 MiB")
                    && e.getMessage().contains("before touching a page"), e.getMessage());
            assertEquals(56 * MIB, backend.liveBytes(), "the refused allocation counts nothing");
            // pinned memory counts too, and freeing gives the room back
            assertThrows(FlexLinkException.class, () -> backend.allocatePinned(8 * MIB));
            held.remove(0).close();
            try (DeviceMemory again = backend.allocate(7, 8 * MIB)) {
                assertEquals(8 * MIB, again.byteSize());
            }
            held.forEach(DeviceMemory::close);
            assertEquals(0, backend.liveBytes());
        }
    }

    @Test
    void memoryTouchedElsewhereShrinksTheLimitAndUntouchedMemoryOfOursStillCounts() {
        AtomicLong available = new AtomicLong(64 * MIB);
        try (HostBackend backend = backendOn(available::get)) {
            DeviceMemory a = backend.allocate(0, 16 * MIB); // untouched: the probe still says 64
            DeviceMemory b = backend.allocate(0, 16 * MIB);
            // 32 MiB allocated, 64 available: untouched memory still counts, so 32 more would be too much
            assertEquals(Result.SYSTEM_ERROR, assertThrows(FlexLinkException.class,
                    () -> backend.allocate(0, 32 * MIB)).result());
            available.set(16 * MIB); // another process took 48 MiB: ours (32) + 16 is all there is now
            assertEquals(Result.SYSTEM_ERROR, assertThrows(FlexLinkException.class,
                    () -> backend.allocate(0, 16 * MIB)).result());
            try (PinnedMemory small = backend.allocatePinned(8 * MIB)) {
                assertEquals(8 * MIB, small.byteSize());
            }
            a.close();
            b.close();
        }
    }

    @Test
    void aMachineThatDoesNotSayLimitsNothingButTheAllocatorItself() {
        try (HostBackend backend = backendOn(() -> -1)) {
            try (DeviceMemory m = backend.allocate(0, 8 * MIB)) {
                assertEquals(8 * MIB, m.byteSize());
            }
            // what malloc itself refuses is SYSTEM_ERROR too, never a bare IllegalArgumentException
            FlexLinkException e = assertThrows(FlexLinkException.class, () -> backend.allocate(0, Long.MAX_VALUE));
            assertEquals(Result.SYSTEM_ERROR, e.result(), e.getMessage());
            assertEquals(0, backend.liveBytes());
        }
    }

    @Test
    void theProcessBudgetRefusesTheImpossibleBeforeMallocDoes() {
        try (HostBackend backend = new HostBackend(CONFIG)) {
            for (long bytes : new long[] {Long.MAX_VALUE, 100L << 30, 1L << 50}) {
                FlexLinkException e = assertThrows(FlexLinkException.class, () -> backend.allocate(0, bytes));
                assertEquals(Result.SYSTEM_ERROR, e.result(), e.getMessage());
            }
            assertEquals(0, backend.liveBytes());
        }
    }

    @Test
    void thisMachineSaysHowMuchItHasLeft() throws Exception {
        long total = -1;
        for (String line : Files.readAllLines(Path.of("/proc/meminfo"))) {
            if (line.startsWith("MemTotal:")) {
                total = Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
            }
        }
        long available = HostMemoryProbe.SYSTEM.availableBytes();
        assertTrue(available > 0 && available <= total, available + " of " + total);
    }
}
