package io.flexlink.runtime.host;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import java.util.Arrays;

/**
 * The address ranges of the host backend's live allocations, so that an address that is not one of them
 * (freed, never allocated, or past an allocation's end) is refused with an error instead of taking the
 * process down: on the host backend "device memory" is process memory, and a stream touching a freed or
 * foreign address would crash the JVM where CUDA answers with an error code.
 *
 * <p>The ranges live in sorted arrays replaced whole on each allocation and free (copy on write, under a
 * lock: allocations are rare), so a check is a lock-free binary search over one volatile snapshot and
 * allocates nothing. The last few freed ranges are remembered so that the message can say "freed".
 */
final class LiveRanges {
    /** Memory any device's streams may use (pinned and shared memory). */
    static final int ANY_DEVICE = -1;
    private static final int FREED_KEPT = 64;

    /** Sorted by start; ranges never overlap. */
    private static final class Snapshot {
        final long[] starts;
        final long[] ends;
        final int[] devices;

        Snapshot(long[] starts, long[] ends, int[] devices) {
            this.starts = starts;
            this.ends = ends;
            this.devices = devices;
        }
    }

    private volatile Snapshot live = new Snapshot(new long[0], new long[0], new int[0]);
    private final long[] freedStarts = new long[FREED_KEPT];
    private final long[] freedEnds = new long[FREED_KEPT];
    private int freedNext;

    /** Registers {@code [start, start + bytes)} of {@code device} ({@link #ANY_DEVICE} for host memory). */
    synchronized void add(long start, long bytes, int device) {
        Snapshot s = live;
        int at = -Arrays.binarySearch(s.starts, start) - 1;
        if (at < 0) {
            throw new FlexLinkException(Result.INTERNAL_ERROR, "host backend: memory at 0x" + Long.toHexString(start)
                    + " registered twice");
        }
        int n = s.starts.length;
        long[] starts = new long[n + 1];
        long[] ends = new long[n + 1];
        int[] devices = new int[n + 1];
        System.arraycopy(s.starts, 0, starts, 0, at);
        System.arraycopy(s.ends, 0, ends, 0, at);
        System.arraycopy(s.devices, 0, devices, 0, at);
        starts[at] = start;
        ends[at] = start + bytes;
        devices[at] = device;
        System.arraycopy(s.starts, at, starts, at + 1, n - at);
        System.arraycopy(s.ends, at, ends, at + 1, n - at);
        System.arraycopy(s.devices, at, devices, at + 1, n - at);
        live = new Snapshot(starts, ends, devices);
    }

    /** Unregisters the range starting at {@code start}; false when none does. */
    synchronized boolean remove(long start) {
        Snapshot s = live;
        int at = Arrays.binarySearch(s.starts, start);
        if (at < 0) {
            return false;
        }
        freedStarts[freedNext] = start;
        freedEnds[freedNext] = s.ends[at];
        freedNext = (freedNext + 1) % FREED_KEPT;
        int n = s.starts.length;
        long[] starts = new long[n - 1];
        long[] ends = new long[n - 1];
        int[] devices = new int[n - 1];
        System.arraycopy(s.starts, 0, starts, 0, at);
        System.arraycopy(s.ends, 0, ends, 0, at);
        System.arraycopy(s.devices, 0, devices, 0, at);
        System.arraycopy(s.starts, at + 1, starts, at, n - at - 1);
        System.arraycopy(s.ends, at + 1, ends, at, n - at - 1);
        System.arraycopy(s.devices, at + 1, devices, at, n - at - 1);
        live = new Snapshot(starts, ends, devices);
        return true;
    }

    /** Live ranges now. */
    int size() {
        return live.starts.length;
    }

    /**
     * Null when {@code [address, address + bytes)} lies inside one live range that a stream of
     * {@code device} may use ({@code device} {@link #ANY_DEVICE}: any range), or when {@code bytes} is 0;
     * else what is wrong. Lock-free, allocation-free unless it finds a problem.
     */
    String problem(long address, long bytes, int device) {
        if (bytes <= 0) {
            return bytes < 0 ? bytes + " bytes is negative" : null; // zero bytes touch nothing
        }
        Snapshot s = live;
        int at = Arrays.binarySearch(s.starts, address);
        if (at < 0) {
            at = -at - 2; // the last range starting before address
        }
        if (at < 0 || address >= s.ends[at]) {
            return notLive(address);
        }
        if (bytes > s.ends[at] - address) {
            return "[0x" + Long.toHexString(address) + ", +" + bytes + ") runs " + (bytes - (s.ends[at] - address))
                    + " bytes past the end of its allocation of " + (s.ends[at] - s.starts[at]) + " bytes at 0x"
                    + Long.toHexString(s.starts[at]);
        }
        if (device != ANY_DEVICE && s.devices[at] != ANY_DEVICE && s.devices[at] != device) {
            return "0x" + Long.toHexString(address) + " lives on device " + s.devices[at] + ", not on device "
                    + device;
        }
        return null;
    }

    private synchronized String notLive(long address) {
        for (int i = 0; i < FREED_KEPT; i++) {
            if (freedEnds[i] != 0 && address >= freedStarts[i] && address < freedEnds[i]) {
                return "0x" + Long.toHexString(address) + " is in memory that was freed (an allocation of "
                        + (freedEnds[i] - freedStarts[i]) + " bytes at 0x" + Long.toHexString(freedStarts[i]) + ")";
            }
        }
        return "0x" + Long.toHexString(address) + " is not memory of this host backend (never allocated by it, or "
                + "freed)";
    }
}
