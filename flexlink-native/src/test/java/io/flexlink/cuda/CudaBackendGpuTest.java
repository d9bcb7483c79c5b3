package io.flexlink.cuda;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.Stream;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.PinnedMemory;
import io.flexlink.runtime.RuntimeEvent;
import io.flexlink.runtime.RuntimeStream;
import java.nio.ByteBuffer;
import java.util.SplittableRandom;
import org.bytedeco.cuda.cudart.CUstream_st;
import org.bytedeco.cuda.global.cudart;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("gpu")
@SuppressWarnings("try") // closes resources twice on purpose: close() is idempotent
class CudaBackendGpuTest {
    static CudaBackend backend;

    @BeforeAll
    static void open() {
        backend = GpuTests.open();
    }

    @AfterAll
    static void close() {
        if (backend != null) {
            backend.close();
            backend.close(); // idempotent
        }
    }

    static byte[] random(int n, long seed) {
        byte[] b = new byte[n];
        new SplittableRandom(seed).nextBytes(b);
        return b;
    }

    @Test
    void describesItself() {
        assertEquals("cuda", backend.name());
        assertTrue(backend.deviceCount() >= 1);
        assertEquals(backend.deviceCount(), backend.topology().gpuCount());
        assertTrue(backend.primaryTransport().describe().startsWith("NCCL 2."), backend.primaryTransport().describe());
        assertFalse(backend.primaryTransport().allowsSharedDevices());
        java.util.Set<String> keys = new java.util.HashSet<>();
        for (int d = 0; d < backend.deviceCount(); d++) {
            String key = backend.deviceKey(d);
            // the bus id, as every process names this GPU whatever CUDA_VISIBLE_DEVICES makes its ordinal
            assertTrue(key.matches("[0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}\\.[0-9a-f]"), key);
            assertEquals(backend.topology().gpu(d).pciBusId(), key);
            assertTrue(keys.add(key), "device " + d + " has a key of its own: " + key);
        }
    }

    @Test
    void deviceMemoryRoundTripsAndFills() {
        int n = (1 << 20) + 3;
        byte[] data = random(n, 1);
        try (DeviceMemory m = backend.allocate(0, n)) {
            assertEquals(n, m.byteSize());
            backend.upload(m.address(), ByteBuffer.wrap(data));
            ByteBuffer back = ByteBuffer.allocateDirect(n);
            backend.download(back, m.address());
            byte[] got = new byte[n];
            back.get(got);
            assertArrayEquals(data, got);
            backend.fill(m.address() + 5, 100, (byte) 0x5A);
            byte[] heap = new byte[110];
            backend.download(ByteBuffer.wrap(heap), m.address());
            for (int i = 0; i < 110; i++) {
                assertEquals(i >= 5 && i < 105 ? 0x5A : data[i], heap[i], "byte " + i);
            }
            long live = backend.liveDeviceBytes();
            m.close();
            m.close(); // idempotent
            assertEquals(live - n, backend.liveDeviceBytes());
        }
    }

    @Test
    void countersReleaseStreamsAndStreamsWriteCounters() throws Exception {
        try (PinnedMemory pin = backend.allocatePinned(4096)) {
            assertEquals(0, pin.readCounter(64));
            RuntimeStream s = backend.createStream(0, "test.wait");
            s.waitValue32(pin, 64, 3);
            s.writeValue32(pin, 128, 7);
            Thread.sleep(50);
            assertFalse(s.isIdle(), "the stream must be blocked on the counter");
            assertEquals(0, pin.readCounter(128));
            pin.writeCounter(64, 2);
            Thread.sleep(20);
            assertEquals(0, pin.readCounter(128), "2 < 3: still blocked");
            pin.writeCounter(64, 4); // >= releases
            s.synchronize();
            assertEquals(7, pin.readCounter(128));
            // stream to stream through a counter, the order the staging protocol uses
            RuntimeStream p = backend.createStream(0, "test.producer");
            try (DeviceMemory src = backend.allocate(0, 4096); DeviceMemory dst = backend.allocate(0, 4096)) {
                byte[] data = random(4096, 2);
                backend.upload(src.address(), ByteBuffer.wrap(data));
                s.waitValue32(pin, 192, 1);
                s.copy(dst.address(), pin.deviceAddress() + 1024, 1024);
                p.copy(pin.deviceAddress() + 1024, src.address(), 1024);
                p.writeValue32(pin, 192, 1);
                s.synchronize();
                byte[] got = new byte[1024];
                backend.download(ByteBuffer.wrap(got), dst.address());
                assertArrayEquals(java.util.Arrays.copyOf(data, 1024), got);
            }
            p.close();
            s.close();
            s.close();
        }
    }

    @Test
    void sharedMemoryIsReferenceCounted() {
        PinnedMemory a = backend.createShared(8192);
        assertTrue(a.name().startsWith("flexlink-cuda-" + ProcessHandle.current().pid() + "-"), a.name());
        PinnedMemory b = backend.openShared(a.name(), 8192);
        assertEquals(a.hostAddress(), b.hostAddress());
        assertEquals(a.deviceAddress(), b.deviceAddress());
        a.writeCounter(0, 42);
        assertEquals(42, b.readCounter(0));
        assertThrows(FlexLinkException.class, () -> backend.openShared(a.name(), 1 << 20));
        a.close();
        b.close();
        b.close(); // idempotent
        FlexLinkException e = assertThrows(FlexLinkException.class, () -> backend.openShared(a.name(), 8192));
        assertEquals(Result.INTERNAL_ERROR, e.result());
    }

    @Test
    void eventsOrderStreamsAndTime() {
        RuntimeStream s1 = backend.createStream(0, "test.e1");
        RuntimeStream s2 = backend.createStream(0, "test.e2");
        RuntimeEvent start = backend.createEvent(0, true);
        RuntimeEvent end = backend.createEvent(0, true);
        RuntimeEvent plain = backend.createEvent(0, false);
        try (DeviceMemory a = backend.allocate(0, 64 << 20); DeviceMemory b = backend.allocate(0, 64 << 20)) {
            s1.record(start);
            s1.copy(b.address(), a.address(), 64 << 20);
            s1.record(end);
            s1.record(plain);
            s2.waitEvent(plain);
            s2.copy(a.address(), b.address(), 1 << 20);
            s2.synchronize();
            assertTrue(plain.isComplete());
            end.synchronize();
            assertTrue(end.elapsedMillis(start) > 0);
            assertThrows(FlexLinkException.class, () -> plain.elapsedMillis(start));
        }
        start.close();
        end.close();
        plain.close();
        plain.close();
        s1.close();
        s2.close();
    }

    @Test
    void wrappedStreamsAreCachedAndNotOwned() {
        CUstream_st raw = new CUstream_st();
        assertEquals(0, cudart.cudaStreamCreate(raw));
        CudaStream w = backend.wrapStream(raw.address(), 0);
        assertSame(w, backend.wrapStream(raw.address(), 0));
        assertSame(backend.wrapStream(0, 0), backend.wrapStream(0, 0));
        assertSame(w, backend.runtimeStream(w));
        w.synchronize();
        w.close();
        assertEquals(0, cudart.cudaStreamQuery(raw), "closing a wrapper must not destroy the stream");
        CudaStream again = backend.wrapStream(raw.address(), 0);
        assertTrue(again != w);
        again.close();
        assertEquals(0, cudart.cudaStreamDestroy(raw));
    }

    @Test
    void foreignStreamsAreRejected() {
        Stream foreign = new Stream() {
            @Override public int device() { return 0; }
            @Override public void synchronize() { }
            @Override public boolean isIdle() { return true; }
            @Override public void close() { }
        };
        FlexLinkException e = assertThrows(FlexLinkException.class, () -> backend.runtimeStream(foreign));
        assertEquals(Result.INVALID_ARGUMENT, e.result());
    }

    @Test
    void enqueueErrorsThrowWithTheCudaNameAndStick() {
        RuntimeStream s = backend.createStream(0, "test.error");
        RuntimeEvent destroyed = backend.createEvent(0, false);
        destroyed.close(); // its handle is now NULL, which the runtime rejects at enqueue
        try {
            FlexLinkException e = assertThrows(FlexLinkException.class, () -> s.record(destroyed));
            assertEquals(Result.UNHANDLED_CUDA_ERROR, e.result());
            assertTrue(e.getMessage().contains("cudaError"), e.getMessage());
            assertNotNull(s.failure());
            assertSame(s.failure(), s.failure());
            assertThrows(FlexLinkException.class, s::synchronize);
        } finally {
            s.close();
        }
        FlexLinkException closed = assertThrows(FlexLinkException.class, () -> s.copy(0, 0, 1));
        assertEquals(Result.INVALID_USAGE, closed.result());
    }
}
