package io.flexlink.validate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.DataType;
import io.flexlink.FlexLinkException;
import java.lang.management.ManagementFactory;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The overlap sweep of {@link AllToAllvArgs} against the definition (every pair of pieces compared) on
 * seeded random layouts, and a steady state of checks that allocates nothing.
 */
class AllToAllvArgsTest {
    /** The definition: some written piece shares a byte with another piece. */
    static boolean overlapByDefinition(long send, long[] sc, long[] sd, long recv, long[] rc, long[] rd) {
        int n = sc.length;
        long[][] p = new long[2 * n][];
        for (int j = 0; j < n; j++) {
            p[2 * j] = sc[j] > 0 ? new long[] {send + sd[j] * 4, send + (sd[j] + sc[j]) * 4} : null;
            p[2 * j + 1] = rc[j] > 0 ? new long[] {recv + rd[j] * 4, recv + (rd[j] + rc[j]) * 4} : null;
        }
        for (int a = 0; a < 2 * n; a++) {
            for (int b = a + 1; b < 2 * n; b++) {
                boolean written = a % 2 == 1 || b % 2 == 1;
                if (p[a] != null && p[b] != null && written && p[a][0] < p[b][1] && p[b][0] < p[a][1]) {
                    return true;
                }
            }
        }
        return false;
    }

    @Test
    void theSweepFindsExactlyTheOverlapsThatThePairsDo() {
        AllToAllvArgs args = new AllToAllvArgs();
        SplittableRandom random = new SplittableRandom(17);
        int refused = 0;
        for (int round = 0; round < 20_000; round++) {
            int n = random.nextInt(1, 7);
            long[] sc = new long[n];
            long[] sd = new long[n];
            long[] rc = new long[n];
            long[] rd = new long[n];
            for (int j = 0; j < n; j++) {
                sc[j] = random.nextInt(4) == 0 ? 0 : random.nextInt(1, 20);
                rc[j] = random.nextInt(4) == 0 ? 0 : random.nextInt(1, 20);
                sd[j] = random.nextInt(60);
                rd[j] = random.nextInt(60);
            }
            // one buffer for both in a third of the rounds, so reads and writes can meet
            long send = 1 << 20;
            long recv = random.nextInt(3) == 0 ? send + 4L * random.nextInt(40) : 1 << 24;
            boolean want = overlapByDefinition(send, sc, sd, recv, rc, rd);
            FlexLinkException got = null;
            try {
                args.check(send, sc, sd, recv, rc, rd, DataType.INT32, n);
            } catch (FlexLinkException e) {
                got = e;
            }
            if (want) {
                assertTrue(got != null && got.getMessage().contains("overlaps"), "round " + round + ": " + got);
                refused++;
            } else {
                assertNull(got, "round " + round);
            }
        }
        assertTrue(refused > 1_000 && refused < 19_000, "both outcomes were tried: " + refused);
    }

    @Test
    void aSteadyStateOfChecksAllocatesNothing() {
        AllToAllvArgs args = new AllToAllvArgs();
        int n = 64;
        long[] c = new long[n];
        long[] d = new long[n];
        for (int j = 0; j < n; j++) {
            c[j] = 100 + j;
            d[j] = (n - 1 - j) * 1_000L; // in reverse order: the sort has work to do
        }
        for (int i = 0; i < 10_000; i++) { // warm up (the arrays grow once, the JIT compiles)
            args.check(1 << 20, c, d, 1 << 28, c, d, DataType.FLOAT32, n);
        }
        com.sun.management.ThreadMXBean bean = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long tid = Thread.currentThread().getId();
        long before = bean.getThreadAllocatedBytes(tid);
        for (int i = 0; i < 10_000; i++) {
            args.check(1 << 20, c, d, 1 << 28, c, d, DataType.FLOAT32, n);
        }
        assertEquals(0, bean.getThreadAllocatedBytes(tid) - before, "bytes allocated by 10,000 checks");
    }
}
