package io.flexlink.runtime;

import java.util.Arrays;

/**
 * Which device each region of a shared staging area serves, so that a backend can put each region's
 * pages on that device's NUMA node: region {@code i} is {@code [starts[i], starts[i + 1])} (the last one
 * runs to the end), near the device of key {@code devices[i]} ({@link Backend#deviceKey}: the device of a rank
 * in another process is named as that process names it to every rank).
 */
public final class MemoryPlacement {
    private final long[] starts;
    private final String[] devices;

    public MemoryPlacement(long[] starts, String[] devices) {
        if (starts.length != devices.length || starts.length == 0 || starts[0] != 0) {
            throw new IllegalArgumentException("placement: regions must start at 0, one device per region");
        }
        this.starts = starts.clone();
        this.devices = devices.clone();
    }

    public int regions() {
        return starts.length;
    }

    public long start(int i) {
        return starts[i];
    }

    /** End of region {@code i} in an area of {@code total} bytes. */
    public long end(int i, long total) {
        return i + 1 < starts.length ? starts[i + 1] : total;
    }

    /** The {@link Backend#deviceKey key} of the device region {@code i} serves. */
    public String device(int i) {
        return devices[i];
    }

    @Override
    public String toString() {
        return "MemoryPlacement" + Arrays.toString(starts) + "->" + Arrays.toString(devices);
    }
}
