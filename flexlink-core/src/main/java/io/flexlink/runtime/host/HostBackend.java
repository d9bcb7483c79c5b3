package io.flexlink.runtime.host;

import static io.flexlink.runtime.NativeMemory.UNSAFE;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.Stream;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.NativeMemory;
import io.flexlink.runtime.PinnedMemory;
import io.flexlink.runtime.PrimaryTransport;
import io.flexlink.runtime.RuntimeEvent;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.shm.ShmSegment;
import io.flexlink.runtime.shm.ShmSweep;
import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The host backend: CPU threads play streams, off-heap memory plays device and pinned memory. It runs
 * the same engine and staging protocol as the CUDA backend, so CI, which has no GPU, proves them.
 */
public final class HostBackend implements Backend {
    private static final SecureRandom RANDOM = new SecureRandom();

    private final FlexLinkConfig config;
    private final int devices;
    private final AtomicLong liveBytes = new AtomicLong();
    private final Map<String, HostPinnedMemory> shared = new ConcurrentHashMap<>();
    private final Set<HostStream> streams = ConcurrentHashMap.newKeySet();
    private final HostRingTransport ring;
    private final QuietUnmapper unmapper = new QuietUnmapper(streams);
    private volatile boolean closed;
    private volatile HostFaults faults;
    private volatile Emulation emulation;

    public HostBackend(FlexLinkConfig config) {
        this.config = config.conclude();
        this.devices = config.hostDevices();
        this.ring = new HostRingTransport(this, config);
        this.emulation = Emulation.parse(config.emulate());
        ShmSweep.sweepOnce(config.shmDir());
    }

    /** Changes the emulated link speeds from now on ({@code flexlink.emulate} syntax). */
    public void setEmulation(String spec) {
        this.emulation = Emulation.parse(spec);
    }

    Emulation emulation() {
        return emulation;
    }

    @Override
    public String fingerprint() {
        return "host devices=" + devices + " emulate=" + config.emulate();
    }

    public FlexLinkConfig config() {
        return config;
    }

    @Override
    public String name() {
        return "host";
    }

    @Override
    public int deviceCount() {
        return devices;
    }

    private void checkDevice(int device) {
        if (device < 0 || device >= devices) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT,
                    "device: " + device + " is not in [0, " + devices + ") on the host backend");
        }
    }

    private long allocateRaw(long bytes) {
        if (bytes < 0) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "bytes: negative size " + bytes);
        }
        try {
            long a = UNSAFE.allocateMemory(Math.max(bytes, 1));
            liveBytes.addAndGet(bytes);
            return a;
        } catch (OutOfMemoryError e) {
            throw new FlexLinkException(Result.SYSTEM_ERROR, "out of off-heap memory allocating " + bytes + " bytes", e);
        }
    }

    void free(long address, long bytes) {
        UNSAFE.freeMemory(address);
        liveBytes.addAndGet(-bytes);
    }

    /** Installs a test hook run before every stream operation enqueued from now on (null removes it). */
    public void setFaults(HostFaults faults) {
        this.faults = faults;
    }

    HostFaults faults() {
        return faults;
    }

    /** Operations ever enqueued on {@code stream} (tests: a rejected call must enqueue nothing). */
    public long enqueuedOps(Stream stream) {
        return ((HostStream) runtimeStream(stream)).enqueuedCount();
    }

    /** Off-heap bytes currently allocated through this backend (leak checks). */
    public long liveBytes() {
        return liveBytes.get();
    }

    /** Streams not yet closed (leak checks). */
    public int liveStreams() {
        return streams.size();
    }

    @Override
    public DeviceMemory allocate(int device, long bytes) {
        checkDevice(device);
        return new HostDeviceMemory(this, allocateRaw(bytes), bytes, device);
    }

    @Override
    public PinnedMemory allocatePinned(long bytes) {
        long a = allocateRaw(bytes);
        UNSAFE.setMemory(a, bytes, (byte) 0);
        return new HostPinnedMemory(this, a, bytes, null, null);
    }

    @Override
    public PinnedMemory createShared(long bytes) {
        return createShared(bytes, null);
    }

    @Override
    public PinnedMemory createShared(long bytes, String purpose) {
        long a = allocateRaw(bytes);
        UNSAFE.setMemory(a, bytes, (byte) 0);
        byte[] id = new byte[12];
        RANDOM.nextBytes(id);
        String name = "flexlink-host-" + HexFormat.of().formatHex(id);
        HostPinnedMemory m = new HostPinnedMemory(this, a, bytes, name, purpose);
        shared.put(name, m);
        return m;
    }

    @Override
    public PinnedMemory createShared(long bytes, String purpose, boolean crossProcess) {
        if (!crossProcess) {
            return createShared(bytes, purpose);
        }
        ShmSegment seg = ShmSegment.create(config.shmDir(), bytes);
        liveBytes.addAndGet(bytes);
        // the purpose travels in the name: the link emulation of the peers throttles by it
        String name = purpose == null ? seg.name() : seg.name() + PURPOSE_MARK + purpose;
        return new HostPinnedMemory(this, seg.address(), bytes, name, purpose, seg);
    }

    private static final String PURPOSE_MARK = "#";

    @Override
    public void sharedMapped(PinnedMemory memory) {
        ShmSegment seg = ((HostPinnedMemory) memory).segment();
        if (seg != null) {
            seg.unlink();
        }
    }

    @Override
    public PinnedMemory openShared(String name, long bytes) {
        if (ShmSegment.isName(name)) {
            int mark = name.lastIndexOf(PURPOSE_MARK);
            ShmSegment seg = ShmSegment.open(config.shmDir(), mark < 0 ? name : name.substring(0, mark), bytes);
            liveBytes.addAndGet(bytes);
            return new HostPinnedMemory(this, seg.address(), bytes, name,
                    mark < 0 ? null : name.substring(mark + 1), seg);
        }
        HostPinnedMemory m = shared.get(name);
        if (m == null || !m.retain()) {
            throw new FlexLinkException(Result.INTERNAL_ERROR, "shared memory '" + name + "' is not in this process");
        }
        if (m.byteSize() < bytes) {
            m.close();
            throw new FlexLinkException(Result.INTERNAL_ERROR,
                    "shared memory '" + name + "' has " + m.byteSize() + " bytes, expected " + bytes);
        }
        return m;
    }

    void releaseShared(HostPinnedMemory m) {
        if (m.segment() != null) {
            liveBytes.addAndGet(-m.byteSize());
            m.segment().unlink();
            unmapper.unmapWhenQuiet(m.segment());
            return;
        }
        if (m.name() != null) {
            shared.remove(m.name());
        }
        free(m.hostAddress(), m.byteSize());
    }

    /** Cancels every wait on the counters of {@code mem} (used by communicator abort). */
    public static void abortWaits(PinnedMemory mem) {
        ((HostPinnedMemory) mem).abort();
    }

    @Override
    public RuntimeStream createStream(int device, String label) {
        checkDevice(device);
        HostStream s = new HostStream(this, device, label);
        streams.add(s);
        return s;
    }

    void streamClosed(HostStream s) {
        streams.remove(s);
        unmapper.closed(s);
    }

    @Override
    public RuntimeEvent createEvent(int device, boolean timing) {
        checkDevice(device);
        return new HostEvent(timing);
    }

    @Override
    public PrimaryTransport primaryTransport() {
        return ring;
    }

    @Override
    public void upload(long dst, ByteBuffer src) {
        int n = src.remaining();
        if (src.isDirect()) {
            ByteBuffer d = src.duplicate();
            long from = addressOf(d) + d.position();
            UNSAFE.copyMemory(from, dst, n);
        } else {
            UNSAFE.copyMemory(src.array(), UNSAFE.arrayBaseOffset(byte[].class) + src.arrayOffset() + src.position(),
                    null, dst, n);
        }
    }

    @Override
    public void download(ByteBuffer dst, long src) {
        int n = dst.remaining();
        if (dst.isDirect()) {
            long to = addressOf(dst) + dst.position();
            UNSAFE.copyMemory(src, to, n);
        } else {
            UNSAFE.copyMemory(null, src, dst.array(),
                    UNSAFE.arrayBaseOffset(byte[].class) + dst.arrayOffset() + dst.position(), n);
        }
    }

    private static long addressOf(ByteBuffer direct) {
        return NativeMemory.address(direct);
    }

    @Override
    public void fill(long dst, long bytes, byte value) {
        UNSAFE.setMemory(dst, bytes, value);
    }

    @Override
    public RuntimeStream runtimeStream(Stream stream) {
        if (stream instanceof HostStream && ((HostStream) stream).backend() == this) {
            return (HostStream) stream;
        }
        throw new FlexLinkException(Result.INVALID_ARGUMENT,
                "stream: " + stream + " was not created by this host backend");
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (HostStream s : streams) {
            s.close();
        }
    }

    @Override
    public String toString() {
        return "host backend (" + devices + " emulated devices)";
    }
}
