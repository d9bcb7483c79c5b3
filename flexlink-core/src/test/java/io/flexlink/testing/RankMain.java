package io.flexlink.testing;

import io.flexlink.Collective;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.FlexLinkException;
import io.flexlink.ReduceOp;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.verify.DataPattern;
import io.flexlink.verify.Expected;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;

/**
 * One rank of a multi-process job, started by the tests with torchrun's variables
 * ({@code RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT}) and FlexLink's settings in the environment; the
 * communicator comes from {@link FlexLink#initFromEnv()}. Modes:
 * <ul>
 *   <li>{@code check COUNT}: AllReduce, AllGather and ReduceScatter of COUNT float32 elements per rank on
 *   seeded random data, every element checked; prints {@code DIGEST <collective> <sha-256 of the output>}
 *   per collective, exit 0, or 1 when an element is wrong;</li>
 *   <li>{@code loop COUNT}: one checked AllReduce, prints {@code READY}, then AllReduces until one fails
 *   (exit 3), or 120 s pass (exit 4: the failure of a peer went unnoticed);</li>
 *   <li>{@code random COUNT}: one AllReduce (SUM) of COUNT float32 elements of seeded random values of
 *   widely spread magnitudes, whose sums round; prints {@code DIGEST all_reduce_random <sha-256>}, so
 *   that the processes can be compared bit for bit where no exact answer exists;</li>
 *   <li>{@code init}: creates the communicator and closes it.</li>
 * </ul>
 * Any failure prints {@code ERROR <result>: <message>} and exits 2 (3 in the loop).
 */
public final class RankMain {
    private static final long SEED = 20261129L;

    private RankMain() {
    }

    public static void main(String[] args) {
        String mode = args.length > 0 ? args[0] : "check";
        long count = args.length > 1 ? Long.parseLong(args[1]) : 100_003;
        int code;
        try (Communicator comm = FlexLink.initFromEnv()) {
            code = run(mode, comm, count);
        } catch (FlexLinkException e) {
            System.out.println("ERROR " + e.getMessage());
            code = mode.equals("loop") ? 3 : 2;
        } catch (RuntimeException e) {
            System.out.println("ERROR " + e);
            code = 2;
        }
        System.out.flush();
        System.exit(code);
    }

    private static int run(String mode, Communicator comm, long count) {
        Backend backend = FlexLink.backend();
        try (OneRank one = new OneRank(backend, comm)) {
            switch (mode) {
                case "init":
                    System.out.println("OK");
                    return 0;
                case "loop":
                    return loop(one, count);
                case "random":
                    one.random(count, SEED + comm.rank());
                    System.out.println("DIGEST all_reduce_random " + one.digest());
                    return 0;
                default:
                    long wrong = 0;
                    for (Collective c : List.of(Collective.ALL_REDUCE, Collective.ALL_GATHER, Collective.REDUCE_SCATTER)) {
                        long w = one.check(c, count, SEED + c.ordinal());
                        wrong += w;
                        System.out.println("DIGEST " + c.testName() + " " + one.digest() + " wrong=" + w);
                    }
                    return wrong == 0 ? 0 : 1;
            }
        }
    }

    private static int loop(OneRank one, long count) {
        long wrong = one.check(Collective.ALL_REDUCE, count, SEED);
        if (wrong != 0) {
            System.out.println("ERROR " + wrong + " wrong elements before the loop");
            return 1;
        }
        System.out.println("READY");
        System.out.flush();
        long deadline = System.nanoTime() + 120_000_000_000L;
        try {
            while (System.nanoTime() < deadline) {
                one.call(Collective.ALL_REDUCE, count);
                one.stream.synchronize();
                if (one.comm.getAsyncError() != io.flexlink.Result.SUCCESS) {
                    System.out.println("ERROR async " + one.comm.getAsyncError());
                    return 3;
                }
            }
        } catch (FlexLinkException e) {
            System.out.println("ERROR " + e.getMessage());
            return 3;
        }
        System.out.println("NO-ERROR");
        return 4;
    }

    /** This process's rank: its buffers, stream and a checked call. */
    private static final class OneRank implements AutoCloseable {
        final Backend backend;
        final Communicator comm;
        final RuntimeStream stream;
        DeviceMemory send;
        DeviceMemory recv;
        ByteBuffer host = ByteBuffer.allocateDirect(0);
        long outBytes;

        OneRank(Backend backend, Communicator comm) {
            this.backend = backend;
            this.comm = comm;
            this.stream = backend.createStream(comm.device(), "rank-main");
        }

        private ByteBuffer host(long bytes) {
            if (host.capacity() < bytes) {
                host = ByteBuffer.allocateDirect((int) bytes).order(ByteOrder.nativeOrder());
            }
            host.clear().limit((int) bytes);
            return host;
        }

        private void ensure(long inBytes, long outBytes) {
            if (send == null || send.byteSize() < inBytes) {
                if (send != null) {
                    send.close();
                }
                send = backend.allocate(comm.device(), inBytes);
            }
            if (recv == null || recv.byteSize() < outBytes) {
                if (recv != null) {
                    recv.close();
                }
                recv = backend.allocate(comm.device(), outBytes);
            }
        }

        void call(Collective c, long count) {
            CollectiveHarness.enqueue(c, comm, send.address(), recv.address(), count, DataType.FLOAT32, ReduceOp.SUM,
                    0, stream);
        }

        /** Runs {@code c} once on fresh inputs and counts the wrong output elements of this rank. */
        long check(Collective c, long count, long seed) {
            DataType t = DataType.FLOAT32;
            int n = comm.size();
            int rank = comm.rank();
            long in = Expected.inputCount(c, count, n);
            long out = Expected.outputCount(c, count, n);
            ensure(in * 4, out * 4);
            outBytes = out * 4;
            ByteBuffer b = host(out * 4);
            for (long i = 0; i < out; i++) {
                DataPattern.put(b, t, ~Expected.output(c, t, ReduceOp.SUM, seed, n, rank, 0, count, i));
            }
            b.flip();
            backend.upload(recv.address(), b);
            b = host(in * 4);
            DataPattern.fill(b, t, DataPattern.dataOp(c, ReduceOp.SUM), seed, n, rank, 0, in);
            backend.upload(send.address(), b);
            call(c, count);
            stream.synchronize();
            b = host(out * 4);
            backend.download(b, recv.address());
            long wrong = 0;
            for (long i = 0; i < out; i++) {
                long want = Expected.output(c, t, ReduceOp.SUM, seed, n, rank, 0, count, i) & DataPattern.mask(t);
                if (DataPattern.get(b, t, i) != want) {
                    if (wrong++ < 3) {
                        System.out.println("WRONG " + c.testName() + " [" + i + "] = 0x"
                                + Long.toHexString(DataPattern.get(b, t, i)) + ", expected 0x" + Long.toHexString(want));
                    }
                }
            }
            return wrong;
        }

        /** An in-place AllReduce of random floats (rounding sums). */
        void random(long count, long seed) {
            ensure(count * 4, count * 4);
            outBytes = count * 4;
            java.util.Random rnd = new java.util.Random(seed);
            ByteBuffer b = host(count * 4);
            for (long i = 0; i < count; i++) {
                b.putFloat((float) (rnd.nextGaussian() * Math.pow(10, rnd.nextInt(12) - 6)));
            }
            b.flip();
            backend.upload(recv.address(), b);
            comm.allReduce(recv.address(), recv.address(), count, DataType.FLOAT32, ReduceOp.SUM, stream);
            stream.synchronize();
        }

        /** SHA-256 of the last output. */
        String digest() {
            ByteBuffer b = host(outBytes);
            backend.download(b, recv.address());
            try {
                MessageDigest d = MessageDigest.getInstance("SHA-256");
                d.update(b);
                return HexFormat.of().formatHex(d.digest());
            } catch (java.security.NoSuchAlgorithmException e) {
                throw new IllegalStateException(e);
            }
        }

        @Override
        public void close() {
            try {
                stream.synchronize();
            } catch (FlexLinkException e) {
                // reported already
            }
            stream.close();
            if (send != null) {
                send.close();
            }
            if (recv != null) {
                recv.close();
            }
        }
    }
}
