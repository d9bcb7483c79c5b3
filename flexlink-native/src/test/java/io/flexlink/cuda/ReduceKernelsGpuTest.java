package io.flexlink.cuda;

import io.flexlink.DataType;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.flexlink.ReduceOp;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.NativeMemory;
import io.flexlink.runtime.PinnedMemory;
import io.flexlink.runtime.host.HostReduce;
import io.flexlink.verify.DataPattern;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Every type × op of the reduction kernels against {@link HostReduce}, bit for bit: random bits (NaN,
 * infinities, subnormals included) and {@link DataPattern} values, counts 0, 1, odd and large, aligned
 * and unaligned, with the device-only, fused (b read from mapped host memory) and staged (b copied to
 * scratch first) consumers, and in place. Outputs are poisoned and guard bytes checked.
 */
@Tag("gpu")
class ReduceKernelsGpuTest {
    static final long[] COUNTS = {0, 1, 7, 4099, (1 << 20) + 3};
    static final int DIVISOR = 3;
    static final int GUARD = 64;
    static final byte POISON = (byte) 0xA5;
    static final String[] VARIANTS = {"device", "fused", "staged", "in-place"};

    static CudaBackend backend;
    static CudaStream stream;

    @BeforeAll
    static void open() {
        backend = GpuTests.open();
        stream = (CudaStream) backend.createStream(0, "test.reduce");
    }

    @AfterAll
    static void close() {
        if (backend != null) {
            stream.close();
            backend.close();
        }
    }

    @ParameterizedTest
    @EnumSource(DataType.class)
    void matchesHostReduce(DataType type) {
        List<String> failures = new ArrayList<>();
        int sz = type.size();
        long max = COUNTS[COUNTS.length - 1];
        int bytes = (int) ((max + 1) * sz + GUARD);
        ByteBuffer a = ByteBuffer.allocateDirect(bytes).order(ByteOrder.nativeOrder());
        ByteBuffer b = ByteBuffer.allocateDirect(bytes).order(ByteOrder.nativeOrder());
        ByteBuffer want = ByteBuffer.allocateDirect(bytes).order(ByteOrder.nativeOrder());
        ByteBuffer got = ByteBuffer.allocateDirect(bytes).order(ByteOrder.nativeOrder());
        try (DeviceMemory da = backend.allocate(0, bytes); DeviceMemory db = backend.allocate(0, bytes);
             DeviceMemory dd = backend.allocate(0, bytes); PinnedMemory pb = backend.allocatePinned(bytes)) {
            for (OpDivisor k : cases(type)) {
                ReduceOp op = k.op();
                int div = k.divisor();
                for (int pattern = 0; pattern < 2; pattern++) {
                    fill(a, b, type, op, pattern, 31L * op.ordinal() + pattern);
                    backend.upload(da.address(), a.duplicate().clear());
                    backend.upload(db.address(), b.duplicate().clear());
                    NativeMemory.UNSAFE.copyMemory(NativeMemory.address(b), pb.hostAddress(), bytes);
                    for (long count : COUNTS) {
                        for (int shift = 0; shift <= 1; shift++) {
                            long off = (long) shift * sz; // one element off breaks 16-byte alignment
                            int region = (int) (off + count * sz + GUARD);
                            expected(want, a, b, off, count, type, op, div, region);
                            for (int variant = 0; variant < 4; variant++) {
                                backend.fill(dd.address(), region, POISON);
                                long dst = dd.address() + off;
                                long srcA = da.address() + off;
                                switch (variant) {
                                    case 0: stream.reduce(dst, srcA, db.address() + off, count, type, op, div); break;
                                    case 1: stream.reduceFromHostFused(dst, srcA, pb, off, count, type, op, div); break;
                                    case 2: stream.reduceFromHostStaged(dst, srcA, pb, off, count, type, op, div); break;
                                    default:
                                        stream.copy(dst, srcA, count * sz);
                                        stream.reduceFromHost(dst, dst, pb, off, count, type, op, div);
                                }
                                stream.synchronize();
                                got.clear().limit(region);
                                backend.download(got, dd.address());
                                String bad = compare(want, got, off, count, sz, region);
                                if (bad != null && failures.size() < 20) {
                                    failures.add(op + " /" + div + " pattern " + pattern + " count " + count
                                            + " shift " + shift + " " + VARIANTS[variant] + ": " + bad);
                                }
                            }
                        }
                    }
                }
            }
        }
        assertEquals(List.of(), failures, type.toString());
    }

    private record OpDivisor(ReduceOp op, int divisor) {
    }

    /** Every op; a floating-point AVG also with the running-average step's negative divisor (ReduceChain). */
    private static List<OpDivisor> cases(DataType type) {
        List<OpDivisor> cases = new ArrayList<>();
        for (ReduceOp op : ReduceOp.values()) {
            cases.add(new OpDivisor(op, DIVISOR));
            if (op == ReduceOp.AVG && type.isFloatingPoint()) {
                cases.add(new OpDivisor(op, -DIVISOR));
            }
        }
        return cases;
    }

    /** Pattern 0: random bits; pattern 1: DataPattern's exact-arithmetic values. */
    private static void fill(ByteBuffer a, ByteBuffer b, DataType type, ReduceOp op, int pattern, long seed) {
        if (pattern == 0) {
            SplittableRandom r = new SplittableRandom(seed);
            for (int i = 0; i + 8 <= a.capacity(); i += 8) {
                a.putLong(i, r.nextLong());
                b.putLong(i, r.nextLong());
            }
        } else {
            long n = a.capacity() / type.size();
            DataPattern.fill(a.duplicate().clear(), type, op, seed, DIVISOR, 0, 0, n);
            DataPattern.fill(b.duplicate().clear(), type, op, seed, DIVISOR, 1, 0, n);
        }
    }

    /** The region poisoned, then HostReduce's result at [off, off + count). */
    private static void expected(ByteBuffer want, ByteBuffer a, ByteBuffer b, long off, long count, DataType type,
                                 ReduceOp op, int div, int region) {
        for (int i = 0; i < region; i++) {
            want.put(i, POISON);
        }
        HostReduce.reduce(NativeMemory.address(want) + off, NativeMemory.address(a) + off, NativeMemory.address(b) + off,
                count, type, op, div);
    }

    private static String compare(ByteBuffer want, ByteBuffer got, long off, long count, int sz, int region) {
        int mismatch = want.duplicate().clear().limit(region).mismatch(got.duplicate().clear().limit(region));
        if (mismatch < 0) {
            return null;
        }
        long element = (mismatch - off) / sz;
        String where = mismatch < off || element >= count ? "guard byte " + mismatch + " overwritten"
                : "element " + element;
        return where + ": got 0x" + Integer.toHexString(got.get(mismatch) & 0xff) + ", want 0x"
                + Integer.toHexString(want.get(mismatch) & 0xff);
    }
}
