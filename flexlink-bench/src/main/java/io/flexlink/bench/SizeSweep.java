package io.flexlink.bench;

import java.util.ArrayList;
import java.util.List;

/** The sizes of a sweep, as nccl-tests steps them (each size's buffers: {@link PerfCollective#shape}). */
public final class SizeSweep {
    private SizeSweep() {
    }

    /** The sizes from {@code min} to {@code max}: times {@code factor} when it is above 1, else plus {@code step}. */
    public static List<Long> sizes(long min, long max, long factor, long step) {
        List<Long> out = new ArrayList<>();
        long size = min;
        while (size <= max) {
            out.add(size);
            long next;
            try {
                next = factor > 1 ? Math.multiplyExact(size, factor) : Math.addExact(size, step);
            } catch (ArithmeticException e) {
                break;
            }
            if (next <= size) {
                break;
            }
            size = next;
        }
        return out;
    }

    /**
     * The sizes of nccl-tests' warm-up: {@code min}, then doubling while at most {@code max} (from 1 when
     * {@code min} is 0).
     */
    public static List<Long> warmSizes(long min, long max) {
        List<Long> out = new ArrayList<>();
        for (long size = min; size <= max; size = size == 0 ? 1 : size * 2) {
            out.add(size);
            if (size > Long.MAX_VALUE / 2) {
                break;
            }
        }
        return out;
    }
}
