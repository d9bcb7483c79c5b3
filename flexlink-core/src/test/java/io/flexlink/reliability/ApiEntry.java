package io.flexlink.reliability;

import io.flexlink.Buffer;
import io.flexlink.Collective;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.PreMulSum;
import io.flexlink.ReduceOp;
import io.flexlink.UniqueId;
import io.flexlink.bootstrap.TcpRendezvous;
import io.flexlink.config.ByteSizes;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.config.Setting;
import io.flexlink.reliability.PublicApiExceptionsTest.ApiTargets;
import io.flexlink.runtime.PinnedMemory;
import io.flexlink.runtime.RuntimeStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * One public entry point of the API, called with the arguments a try drew ({@link Args}); what an
 * accepted call made is kept by the targets and closed after the try. Sizes of memory that the backend
 * fills at once (pinned and shared memory) are kept small, so that an accepted call never touches much of
 * the machine's memory.
 */
enum ApiEntry {
    GET_UNIQUE_ID { void call(ApiTargets t, Args x) {
        UniqueId id = FlexLink.getUniqueId(x.s, x.i);
        TcpRendezvous.cancel(id); // frees the port it bound
    } },
    INIT_ALL { void call(ApiTargets t, Args x) {
        int[] devices = x.wellFormed() ? new int[] {Math.floorMod(x.i, 8), Math.floorMod(x.j, 8)}
                : Arrays.copyOf(new int[] {x.i, x.j, (int) x.a}, (int) Math.floorMod(x.b, 4L));
        for (Communicator c : FlexLink.initAll(t.backend, config(x), x.j == 2 ? null : devices)) {
            t.keep(c);
        }
    } },
    INIT_RANK { void call(ApiTargets t, Args x) {
        UniqueId id = x.s == null && !x.wellFormed() ? null : UniqueId.random();
        if (x.wellFormed()) {
            t.keep(FlexLink.initRank(t.backend, config(x), 1, id, 0, Math.floorMod(x.i, 8)));
        } else {
            t.keep(FlexLink.initRank(x.j == 3 ? null : t.backend, config(x), x.i, id, x.j, (int) x.a));
        }
    } },
    INIT_FROM_ENV { void call(ApiTargets t, Args x) {
        Map<String, String> env = new HashMap<>();
        env.put("RANK", x.wellFormed() ? "0" : x.s);
        env.put("WORLD_SIZE", x.wellFormed() ? "1" : x.t);
        env.put("MASTER_ADDR", "127.0.0.1");
        env.put("MASTER_PORT", Integer.toString(x.wellFormed() ? freePort() : x.i));
        t.keep(FlexLink.initFromEnv(t.backend, config(x), x.j == 3 ? null : env));
    } },
    GROUP_END_ALONE { void call(ApiTargets t, Args x) {
        FlexLink.groupEnd();
    } },
    GROUPED_COLLECTIVE { void call(ApiTargets t, Args x) {
        FlexLink.groupStart();
        try {
            COLLECTIVE_BY_ADDRESS.call(t, x);
        } finally {
            FlexLink.groupEnd();
        }
    } },
    COLLECTIVE_BY_ADDRESS { void call(ApiTargets t, Args x) {
        if (x.wellFormed()) {
            collective(t.single, x.i, t.regionA(), x.j % 2 == 0 ? t.regionA() : t.regionB(), x.small(),
                    DataType.values()[Math.floorMod(x.j, 12)], ReduceOp.values()[Math.floorMod(x.i, 5)], 0, t.stream);
        } else {
            collective(t.single, x.i, t.address(x.a), t.address(x.b), x.c, type(x.j), op(x.i + x.j), x.j,
                    t.stream(x.i + x.j));
        }
    } },
    COLLECTIVE_BY_BUFFER { void call(ApiTargets t, Args x) {
        boolean good = x.wellFormed();
        Buffer send = good ? Buffer.wrap(t.regionA(), ApiTargets.REGION, 0) : x.i % 3 == 0 ? t.memory
                : x.i % 3 == 1 ? null : Buffer.wrap(t.address(x.a), x.b, x.j);
        Buffer recv = good ? Buffer.wrap(t.regionB(), ApiTargets.REGION, 0) : x.j % 3 == 0 ? t.memory
                : x.j % 3 == 1 ? t.elsewhere : Buffer.wrap(t.address(x.b), x.a, x.i);
        Communicator c = x.i == 7 ? t.closed : t.single;
        DataType type = good ? DataType.FLOAT32 : type(x.j);
        ReduceOp op = good ? ReduceOp.MAX : op(x.i);
        RuntimeStream s = good ? t.stream : t.stream(x.i);
        long count = good ? x.small() : x.c;
        switch (Math.floorMod(x.i + x.j, 5)) {
            case 0: c.allReduce(send, recv, count, type, op, s); break;
            case 1: c.allGather(send, recv, count, type, s); break;
            case 2: c.reduceScatter(send, recv, count, type, op, s); break;
            case 3: c.broadcast(send, recv, count, type, good ? 0 : x.i, s); break;
            default: c.reduce(send, recv, count, type, op, good ? 0 : x.j, s);
        }
    } },
    PRE_MUL_SUM { void call(ApiTargets t, Args x) {
        Communicator c = x.i == 7 ? t.closed : t.single;
        boolean good = x.wellFormed();
        DataType type = good ? DataType.values()[Math.floorMod(x.j, 12)] : type(x.j);
        PreMulSum op = good || x.i % 2 == 0 ? c.createPreMulSum(Double.longBitsToDouble(x.a), type)
                : x.i % 3 == 0 ? c.createPreMulSum(x.b, type) : c.createPreMulSumOnDevice(t.address(x.a), type);
        try {
            if (!good && x.j % 4 == 0) {
                op.close(); // a destroyed operation: refused
            }
            DataType callType = good || x.j % 3 != 0 ? type : type(x.j + 1);
            long send = good ? t.regionA() : t.address(x.b);
            long recv = good ? t.regionB() : t.address(x.a);
            switch (Math.floorMod(x.i + x.j, 3)) {
                case 0: c.allReduce(send, recv, good ? x.small() : x.c, callType, op, t.stream); break;
                case 1: c.reduceScatter(send, recv, good ? x.small() : x.c, callType, op, t.stream); break;
                default: c.reduce(send, recv, good ? x.small() : x.c, callType, op, good ? 0 : x.j, t.stream);
            }
        } finally {
            op.close();
        }
    } },
    COMMUNICATOR_STATE { void call(ApiTargets t, Args x) {
        (x.i % 2 == 0 ? t.single : t.closed).stats();
        t.single.getAsyncError();
        t.closed.getAsyncError();
        t.closed.abort();
        t.closed.close();
    } },
    UNIQUE_ID_FROM_TEXT { void call(ApiTargets t, Args x) {
        UniqueId.fromBase64(x.s);
    } },
    UNIQUE_ID_FROM_BYTES { void call(ApiTargets t, Args x) {
        byte[] b = x.s == null ? null : UniqueId.fromBase64(ApiTargets.VALID_ID).toBytes();
        if (b != null && x.i >= 0 && x.i < b.length) {
            b[x.i] = (byte) x.a; // a corrupted id: magic, version, port, address length...
        }
        UniqueId.fromBytes(x.j == 0 ? Arrays.copyOf(b == null ? new byte[0] : b, 7) : b);
    } },
    UNIQUE_ID_OF { void call(ApiTargets t, Args x) {
        UniqueId.of(bytes(x.i), x.j, bytes((int) x.a), bytes((int) x.b));
        UniqueId.withAddress(bytes(x.j), x.i);
    } },
    ALLOCATE { void call(ApiTargets t, Args x) {
        t.keep(t.backend.allocate(x.i, x.a));
    } },
    ALLOCATE_PINNED { void call(ApiTargets t, Args x) {
        t.keep(t.backend.allocatePinned(zeroFilled(x.a)));
    } },
    CREATE_SHARED { void call(ApiTargets t, Args x) {
        PinnedMemory m = t.keep(t.backend.createShared(zeroFilled(x.a), x.s, x.i % 2 == 1));
        if (x.j == 1) {
            t.keep(t.backend.openShared(m.name(), m.byteSize()));
        }
    } },
    OPEN_SHARED { void call(ApiTargets t, Args x) {
        t.keep(t.backend.openShared(x.s, x.a));
    } },
    CREATE_STREAM { void call(ApiTargets t, Args x) {
        t.keep(t.backend.createStream(x.i, x.s));
    } },
    CREATE_EVENT { void call(ApiTargets t, Args x) {
        t.keep(t.backend.createEvent(x.i, x.j % 2 == 0));
    } },
    UPLOAD { void call(ApiTargets t, Args x) {
        t.backend.upload(t.address(x.a), buffer(x.i, x.j));
    } },
    DOWNLOAD { void call(ApiTargets t, Args x) {
        t.backend.download(buffer(x.i, x.j), t.address(x.a));
    } },
    FILL { void call(ApiTargets t, Args x) {
        t.backend.fill(t.address(x.a), x.b, (byte) x.i);
    } },
    ACCESS_PROBLEM { void call(ApiTargets t, Args x) {
        t.backend.accessProblem(t.address(x.a), x.b, x.i);
    } },
    RUNTIME_STREAM { void call(ApiTargets t, Args x) {
        t.backend.runtimeStream(t.stream(x.i));
    } },
    STREAM_COPY { void call(ApiTargets t, Args x) {
        if (x.wellFormed()) {
            t.stream.copy(t.regionB(), t.regionA(), x.small());
        } else {
            stream(t, x.j).copy(t.address(x.a), t.address(x.b), x.c);
        }
    } },
    STREAM_COPY_FROM_HOST { void call(ApiTargets t, Args x) {
        if (x.wellFormed()) {
            t.stream.copyFromHost(t.regionB(), t.pinned, 0, Math.floorMod(x.c, 4097L));
        } else {
            stream(t, x.j).copyFromHost(t.address(x.a), t.pinned(x.i), x.b, x.c);
        }
    } },
    STREAM_WAIT_VALUE { void call(ApiTargets t, Args x) {
        PinnedMemory p = t.pinned(x.i);
        // a wait for the counter's present value passes; any other could block the stream for good
        boolean readable = p == t.pinned && x.b >= 0 && x.b <= 4092 && x.b % 4 == 0;
        stream(t, x.j).waitValue32(p, x.b, readable ? p.readCounter(x.b) : x.j);
    } },
    STREAM_WRITE_VALUE { void call(ApiTargets t, Args x) {
        stream(t, x.j).writeValue32(t.pinned(x.i), x.b, (int) x.a);
    } },
    STREAM_REDUCE { void call(ApiTargets t, Args x) {
        if (x.wellFormed()) {
            t.stream.reduce(t.regionB(), t.regionA(), t.regionB(), x.small() / 8, DataType.values()[Math.floorMod(x.j, 12)],
                    ReduceOp.values()[Math.floorMod(x.i, 5)], Math.floorMod(x.i, 7) + 1);
        } else {
            stream(t, x.j).reduce(t.address(x.a), t.address(x.b), t.address(x.a + x.b), x.c, type(x.i), op(x.j),
                    x.i);
        }
    } },
    STREAM_REDUCE_FROM_HOST { void call(ApiTargets t, Args x) {
        stream(t, x.j).reduceFromHost(t.address(x.a), t.address(x.b), t.pinned(x.i), x.b, x.c, type(x.i), op(x.j),
                x.j);
    } },
    STREAM_EVENTS { void call(ApiTargets t, Args x) {
        RuntimeStream s = stream(t, x.j);
        if (x.a % 2 == 0) {
            s.record(t.event(x.i));
        } else {
            s.waitEvent(t.event(x.i));
        }
    } },
    STREAM_SYNCHRONIZE { void call(ApiTargets t, Args x) {
        RuntimeStream s = stream(t, x.j);
        s.synchronize();
        s.failure();
        s.isIdle();
    } },
    EVENT_TIMES { void call(ApiTargets t, Args x) {
        (x.i % 2 == 0 ? t.timing : t.event).elapsedMillis(t.event(x.j));
    } },
    CONFIG_OVERRIDE { void call(ApiTargets t, Args x) {
        Setting<?> s = setting(x.i);
        FlexLinkConfig.builder().set(s, x.wellFormed() && s != null ? s.defaultValue() : x.s).build().conclude();
    } },
    CONFIG_ENVIRONMENT { void call(ApiTargets t, Args x) {
        Map<String, String> env = new HashMap<>();
        Setting<?> s = setting(x.i);
        env.put(s == null ? "FLEXLINK_BOGUS" : s.env(), x.s);
        FlexLinkConfig.builder().environment(x.j == 0 ? null : env).build().conclude();
    } },
    CONFIG_READ { void call(ApiTargets t, Args x) {
        FlexLinkConfig c = FlexLinkConfig.builder().build().with(setting(x.i), x.s);
        c.get(setting(x.j));
        c.raw(setting(x.j));
    } },
    PARSERS { void call(ApiTargets t, Args x) {
        switch (Math.floorMod(x.i, 6)) {
            case 0: DataType.parse(x.s); break;
            case 1: ReduceOp.parse(x.s); break;
            case 2: Collective.parse(x.s); break;
            case 3: DataType.fromCode(x.j); break;
            case 4: ReduceOp.fromCode(x.j); break;
            default: ByteSizes.parse(x.s);
        }
    } },
    BUFFER_SLICE { void call(ApiTargets t, Args x) {
        (x.i % 2 == 0 ? t.memory : Buffer.wrap(t.address(x.a), x.b, x.j)).slice(x.c, x.a);
    } };

    /** The arguments one try drew. */
    record Args(long a, long b, long c, int i, int j, String s, String t) {
        /** A third of the tries make a well-formed call of the entry point, which must be accepted and run. */
        boolean wellFormed() {
            return Math.floorMod(a + i, 3L) == 0;
        }

        /** A count or size that fits one region of the targets' memory at any element size. */
        long small() {
            return Math.floorMod(c, ApiTargets.REGION / 8);
        }
    }

    abstract void call(ApiTargets t, Args x);

    /** Creation waits for absent peers a little only, so that a try that waits for them ends soon. */
    private static FlexLinkConfig config(Args x) {
        FlexLinkConfig.Builder b = FlexLinkConfig.builder().set(FlexLinkConfig.INIT_TIMEOUT, "100ms")
                .set(FlexLinkConfig.TUNING_CACHE, "off");
        if (x.wellFormed()) {
            return b.build();
        }
        if (x.c % 5 == 1) {
            b.set(FlexLinkConfig.CHUNK_BYTES, "1"); // a bad value: creation must refuse it
        }
        return x.c % 7 == 3 ? null : b.build();
    }

    private static int freePort() {
        try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** Pinned and shared memory is zero-filled when made: huge sizes only where they must be refused. */
    private static long zeroFilled(long a) {
        return a < 0 || a > (1L << 40) || a <= (1L << 16) ? a : 1L << 16;
    }

    private static void collective(Communicator c, int which, long send, long recv, long count, DataType type,
                                   ReduceOp op, int root, RuntimeStream s) {
        switch (Math.floorMod(which, 5)) {
            case 0: c.allReduce(send, recv, count, type, op, s); break;
            case 1: c.allGather(send, recv, count, type, s); break;
            case 2: c.reduceScatter(send, recv, count, type, op, s); break;
            case 3: c.broadcast(send, recv, count, type, root, s); break;
            default: c.reduce(send, recv, count, type, op, root, s);
        }
    }

    private static DataType type(int pick) {
        DataType[] all = DataType.values();
        return Math.floorMod(pick, all.length + 1) == all.length ? null : all[Math.floorMod(pick, all.length + 1)];
    }

    private static ReduceOp op(int pick) {
        ReduceOp[] all = ReduceOp.values();
        return Math.floorMod(pick, all.length + 1) == all.length ? null : all[Math.floorMod(pick, all.length + 1)];
    }

    private static Setting<?> setting(int pick) {
        List<Setting<?>> all = FlexLinkConfig.settings();
        int k = Math.floorMod(pick, all.size() + 1);
        return k == all.size() ? null : all.get(k);
    }

    /** A stream to call an operation on (never null: that would be the caller's own NullPointerException). */
    private static RuntimeStream stream(ApiTargets t, int pick) {
        RuntimeStream s = t.stream(pick);
        return s == null ? t.closedStream : s;
    }

    private static byte[] bytes(int length) {
        return length < 0 || length > 200 ? null : "FLXL-some-bytes-".repeat(13).substring(0, length)
                .getBytes(StandardCharsets.US_ASCII);
    }

    /** A direct, heap or read-only buffer of up to 4097 bytes. */
    private static ByteBuffer buffer(int size, int kind) {
        int n = Math.floorMod(size, 4098);
        switch (Math.floorMod(kind, 4)) {
            case 0: return ByteBuffer.allocateDirect(n);
            case 1: return ByteBuffer.allocate(n);
            case 2: return ByteBuffer.allocate(n).asReadOnlyBuffer();
            default: return null;
        }
    }
}
