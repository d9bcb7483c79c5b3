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
    private final QuietRelease quiet = new QuietRelease(streams);
    /** Every live allocation: an address that is not in one is refused, never touched. */
    private final LiveRanges live = new LiveRanges();
    private final HostMemoryBudget budget;
    /** Null in production: nothing wraps the stream operations. */
    private final HostFaults faults;
    private volatile boolean closed;
    private volatile Emulation emulation;

    public HostBackend(FlexLinkConfig config) {
        this(config, null);
    }

    /**
     * A host backend whose streams pass every operation through {@code faults} before running it (fault
     * injection: delays, blocks, failures, lost writes; see {@link HostFaults}); null for none.
     */
    public HostBackend(FlexLinkConfig config, HostFaults faults) {
        this(config, faults, HostMemoryBudget.PROCESS);
    }

    /** With the memory budget allocations are counted against (the process's, or one on a given probe). */
    HostBackend(FlexLinkConfig config, HostFaults faults, HostMemoryBudget budget) {
        this.config = config.conclude();
        this.faults = faults;
        this.budget = budget;
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

    /** Nothing is made by a closed backend (its streams are gone): INVALID_USAGE. */
    private void checkOpen() {
        if (closed) {
            throw new FlexLinkException(Result.INVALID_USAGE, "host backend: used after close");
        }
    }

    private void checkDevice(int device) {
        checkOpen();
        if (device < 0 || device >= devices) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT,
                    "device: " + device + " is not in [0, " + devices + ") on the host backend");
        }
    }

    /** Allocates and registers {@code bytes} of {@code device} ({@link LiveRanges#ANY_DEVICE}: host memory). */
    private long allocateRaw(long bytes, int device) {
        checkOpen();
        if (bytes < 0) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "bytes: negative size " + bytes);
        }
        budget.reserve(bytes); // before any page is touched: overcommitted memory kills the process later
        long a;
        try {
            a = UNSAFE.allocateMemory(Math.max(bytes, 1));
        } catch (OutOfMemoryError | IllegalArgumentException e) {
            budget.release(bytes);
            throw new FlexLinkException(Result.SYSTEM_ERROR, "host backend: out of memory allocating " + bytes
                    + " bytes: " + e.getMessage(), e);
        }
        live.add(a, bytes, device);
        liveBytes.addAndGet(bytes);
        return a;
    }

    /** Unregisters now (later uses are refused) and frees once no stream can still be using the memory. */
    void free(long address, long bytes) {
        live.remove(address);
        liveBytes.addAndGet(-bytes);
        quiet.releaseWhenQuiet("host memory of " + bytes + " bytes at 0x" + Long.toHexString(address), () -> {
            UNSAFE.freeMemory(address);
            budget.release(bytes);
        });
    }

    /** The fault hook this backend was made with, or null. */
    HostFaults faults() {
        return faults;
    }

    /**
     * Null when {@code bytes} at {@code address} lie in one live allocation of this backend that a stream
     * of {@code device} may use (its device memory, or any pinned or shared memory), else what is wrong.
     */
    @Override
    public String accessProblem(long address, long bytes, int device) {
        return live.problem(address, bytes, device);
    }

    /** True while {@code m} is registered (not released). */
    boolean isLive(HostPinnedMemory m) {
        return live.problem(m.hostAddress(), Math.max(1, m.byteSize()), LiveRanges.ANY_DEVICE) == null;
    }

    /** Fails with INVALID_ARGUMENT naming {@code what} unless {@link #accessProblem} finds nothing. */
    void checkAccess(String what, long address, long bytes, int device) {
        String p = live.problem(address, bytes, device);
        if (p != null) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, what + ": " + p);
        }
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
        return new HostDeviceMemory(this, allocateRaw(bytes, device), bytes, device);
    }

    @Override
    public PinnedMemory allocatePinned(long bytes) {
        long a = allocateRaw(bytes, LiveRanges.ANY_DEVICE);
        UNSAFE.setMemory(a, bytes, (byte) 0);
        return new HostPinnedMemory(this, a, bytes, null, null);
    }

    @Override
    public PinnedMemory createShared(long bytes) {
        return createShared(bytes, null);
    }

    @Override
    public PinnedMemory createShared(long bytes, String purpose) {
        long a = allocateRaw(bytes, LiveRanges.ANY_DEVICE);
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
        checkOpen();
        if (bytes < 0) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "bytes: negative size " + bytes);
        }
        ShmSegment seg = ShmSegment.create(config.shmDir(), bytes);
        live.add(seg.address(), bytes, LiveRanges.ANY_DEVICE);
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
        checkOpen();
        if (name == null || bytes < 0) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, name == null ? "name: null"
                    : "bytes: negative size " + bytes);
        }
        if (ShmSegment.isName(name)) {
            int mark = name.lastIndexOf(PURPOSE_MARK);
            ShmSegment seg = ShmSegment.open(config.shmDir(), mark < 0 ? name : name.substring(0, mark), bytes);
            live.add(seg.address(), bytes, LiveRanges.ANY_DEVICE);
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
            live.remove(m.hostAddress());
            liveBytes.addAndGet(-m.byteSize());
            m.segment().unlink();
            quiet.releaseWhenQuiet(m.segment(), m.segment()::close);
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
        if (label == null) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "label: null");
        }
        HostStream s;
        try {
            s = new HostStream(this, device, label);
        } catch (OutOfMemoryError e) { // no thread to spare for its worker
            throw new FlexLinkException(Result.SYSTEM_ERROR, "host backend: cannot start a stream's thread: " + e, e);
        }
        streams.add(s);
        return s;
    }

    void streamClosed(HostStream s) {
        streams.remove(s);
        quiet.closed(s);
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
        if (src == null) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "upload: src: null");
        }
        int n = src.remaining();
        checkAccess("upload: dst", dst, n, LiveRanges.ANY_DEVICE);
        if (src.isDirect()) {
            ByteBuffer d = src.duplicate();
            long from = addressOf(d) + d.position();
            UNSAFE.copyMemory(from, dst, n);
        } else if (src.hasArray()) {
            UNSAFE.copyMemory(src.array(), UNSAFE.arrayBaseOffset(byte[].class) + src.arrayOffset() + src.position(),
                    null, dst, n);
        } else { // a read-only heap buffer hides its array
            byte[] copy = new byte[n];
            src.duplicate().get(copy);
            UNSAFE.copyMemory(copy, UNSAFE.arrayBaseOffset(byte[].class), null, dst, n);
        }
    }

    @Override
    public void download(ByteBuffer dst, long src) {
        if (dst == null) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "download: dst: null");
        }
        if (dst.isReadOnly()) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "download: dst: a read-only buffer");
        }
        int n = dst.remaining();
        checkAccess("download: src", src, n, LiveRanges.ANY_DEVICE);
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
        checkAccess("fill: dst", dst, bytes, LiveRanges.ANY_DEVICE);
        UNSAFE.setMemory(dst, bytes, value);
    }

    @Override
    public RuntimeStream runtimeStream(Stream stream) {
        if (stream == null) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "stream: null");
        }
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
