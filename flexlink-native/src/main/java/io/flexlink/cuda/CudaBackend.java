package io.flexlink.cuda;

import io.flexlink.FlexLink;
import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.Stream;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.PinnedMemory;
import io.flexlink.runtime.PrimaryTransport;
import io.flexlink.runtime.RuntimeEvent;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.shm.ShmSegment;
import io.flexlink.runtime.shm.ShmSweep;
import io.flexlink.topo.Topology;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.bytedeco.cuda.cudart.CUstream_st;
import org.bytedeco.cuda.global.cudart;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The CUDA backend: cudaMalloc'd device memory, {@code cudaHostAlloc(Portable | Mapped)} pinned memory
 * whose counters streams wait on with {@code cuStreamWaitValue32}, non-blocking streams, NVRTC-compiled
 * reduction kernels and NCCL as the primary transport. Shared staging memory is found by name in a
 * registry of this process ({@code flexlink-cuda-<pid>-<random>}); for ranks in other processes it is a
 * {@code /dev/shm} file that every process maps and pins with {@code cudaHostRegister}.
 */
public final class CudaBackend implements Backend {
    static final Logger LOG = LoggerFactory.getLogger(CudaBackend.class);

    private final FlexLinkConfig config;
    private final int devices;
    private final ReduceKernels kernels;
    private final NcclTransport nccl;
    private final Topology topology;
    private final AtomicBoolean noBusIdLogged = new AtomicBoolean();
    private final PinnedAllocator host = new PinnedAllocator(this);
    private final Set<CudaStream> streams = ConcurrentHashMap.newKeySet();
    private final WrappedStreams wrappers;
    private final SyncCopies sync;
    /** How often the streams of each device are asked for faults (one clean answer covers the device's streams). */
    private final QueryPacing queryPacing;
    private final MemOpsCheck memOps;
    private final AtomicLong deviceBytes = new AtomicLong();
    /** CUDA_DEVICE_MAX_CONNECTIONS as CUDA reads it when the process starts: 8 unless set, at most 32. */
    private final int streamQueues;
    private volatile boolean closed;

    CudaBackend(FlexLinkConfig config) {
        this.config = config;
        this.devices = CudaLibraries.deviceCount();
        this.queryPacing = new QueryPacing(devices, StreamStatus.QUERY_INTERVAL_NANOS, System::nanoTime);
        this.kernels = new ReduceKernels(new KernelCompiler(), devices);
        this.nccl = new NcclTransport(this);
        this.wrappers = new WrappedStreams(this, devices);
        this.sync = new SyncCopies(this, devices);
        this.memOps = new MemOpsCheck(devices);
        int[] driver = new int[1];
        int[] runtime = new int[1];
        cudart.cudaDriverGetVersion(driver);
        cudart.cudaRuntimeGetVersion(runtime);
        this.topology = NvmlTopology.detect("flexlink " + FlexLink.VERSION + ", " + nccl.describe() + ", driver "
                + driver[0] / 1000 + "." + (driver[0] % 1000) / 10 + ", runtime " + runtime[0] / 1000 + "."
                + (runtime[0] % 1000) / 10);
        // Streams beyond this many per device share hardware queues in submission order; a stream blocked
        // in cuStreamWaitValue32 then blocks its queue-mates, which can deadlock several ranks per GPU.
        String conns = System.getenv("CUDA_DEVICE_MAX_CONNECTIONS");
        this.streamQueues = hardwareQueues(conns);
        if (conns == null) {
            LOG.info("INIT cuda backend: CUDA_DEVICE_MAX_CONNECTIONS is unset (CUDA uses 8 hardware queues per"
                    + " device); with several ranks per GPU set it to 32");
        }
        LOG.debug("INIT cuda backend: {} device(s), CUDA_DEVICE_MAX_CONNECTIONS={}", devices, conns);
        ShmSweep.sweepOnce(config.shmDir());
    }

    /** Opens the CUDA backend; fails with SYSTEM_ERROR where CUDA, NVRTC or NCCL is missing. */
    public static CudaBackend open(FlexLinkConfig config) {
        String reason = CudaBackendProvider.reason();
        if (reason != null) {
            throw new FlexLinkException(Result.SYSTEM_ERROR, "backend cuda is not available: " + reason);
        }
        return new CudaBackend(config);
    }

    public FlexLinkConfig config() {
        return config;
    }

    /** The GPUs and links NVML reported when the backend opened. */
    public Topology topology() {
        return topology;
    }

    /** GPU models, count, PCIe and NVLink, for the tuning cache (overrides Backend.fingerprint()). */
    public String fingerprint() {
        return topology.fingerprint();
    }

    ReduceKernels kernels() {
        return kernels;
    }

    @Override
    public String name() {
        return "cuda";
    }

    /** Each device's hardware queues: {@code CUDA_DEVICE_MAX_CONNECTIONS}. */
    @Override
    public int streamQueues() {
        return streamQueues;
    }

    /**
     * What CUDA makes of {@code CUDA_DEVICE_MAX_CONNECTIONS} ({@code setting}, null if unset): 1 to 32 as set (the
     * range CUDA documents), else its default of 8, which counts fewer queues than any setting out of range may
     * give, so the local stream errs towards absent.
     */
    static int hardwareQueues(String setting) {
        if (setting != null) {
            try {
                int n = Integer.parseInt(setting.trim());
                if (n >= 1 && n <= 32) {
                    return n;
                }
            } catch (NumberFormatException e) {
                // CUDA falls back to its default too
            }
        }
        return 8;
    }

    /** The device's PCI bus id, as NCCL tells GPUs apart; the ordinal's key where cudart gave none. */
    @Override
    public String deviceKey(int device) {
        String bus = device >= 0 && device < topology.gpus().size() ? topology.gpu(device).pciBusId() : "";
        if (!bus.isEmpty()) {
            return bus;
        }
        if (noBusIdLogged.compareAndSet(false, true)) {
            LOG.warn("INIT device {} has no PCI bus id (cudaDeviceGetPCIBusId failed): ranks on it are told apart "
                    + "by ordinal, so processes that each see one GPU count as sharing device {}", device, device);
        }
        return Backend.super.deviceKey(device);
    }

    @Override
    public int deviceCount() {
        return devices;
    }

    void checkDevice(int device) {
        if (device < 0 || device >= devices) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT,
                    "device: " + device + " is not in [0, " + devices + ") on the cuda backend");
        }
    }

    // ---- memory ----

    @Override
    public DeviceMemory allocate(int device, long bytes) {
        checkDevice(device);
        if (bytes < 0) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "bytes: negative size " + bytes);
        }
        RawPointer p = new RawPointer();
        int previous = Devices.enter(device);
        // relaxed for this thread: scratch that grows during a stream capture is a real allocation, which a
        // global-mode capture would otherwise forbid (and invalidate)
        int[] mode = {cudart.cudaStreamCaptureModeRelaxed};
        cudart.cudaThreadExchangeStreamCaptureMode(mode);
        try {
            int rc = cudart.cudaMalloc(p, Math.max(bytes, 1));
            if (rc != 0) {
                throw new FlexLinkException(rc == cudart.cudaErrorMemoryAllocation ? Result.SYSTEM_ERROR
                        : Result.UNHANDLED_CUDA_ERROR, "cudaMalloc(" + bytes + " B on device " + device + "): "
                        + CudaLibraries.cudaError(rc));
            }
        } finally {
            cudart.cudaThreadExchangeStreamCaptureMode(mode);
            Devices.exit(previous);
        }
        deviceBytes.addAndGet(bytes);
        return new CudaDeviceMemory(this, p.address(), bytes, device);
    }

    void freed(long bytes) {
        deviceBytes.addAndGet(-bytes);
    }

    @Override
    public PinnedMemory allocatePinned(long bytes) {
        return host.allocate(bytes, null);
    }

    @Override
    public PinnedMemory createShared(long bytes) {
        return host.createShared(bytes);
    }

    @Override
    public PinnedMemory createShared(long bytes, String purpose, boolean crossProcess) {
        return crossProcess ? host.createCrossProcess(bytes, config.shmDir()) : host.createShared(bytes);
    }

    @Override
    public PinnedMemory createShared(long bytes, String purpose, boolean crossProcess,
                                     io.flexlink.runtime.MemoryPlacement placement) {
        String mode = config.get(FlexLinkConfig.NUMA);
        if (!NumaPlacement.wanted(mode, NumaPlacement.hostNodes(NumaPlacement.NODES))) {
            return createShared(bytes, purpose, crossProcess);
        }
        return host.createPlaced(bytes, config.shmDir(), placement, topology(), mode.equals("force"));
    }

    @Override
    public PinnedMemory openShared(String name, long bytes) {
        return ShmSegment.isName(name) ? host.openCrossProcess(name, bytes, config.shmDir())
                : host.openShared(name, bytes);
    }

    @Override
    public void sharedMapped(PinnedMemory memory) {
        ShmSegment seg = ((CudaPinnedMemory) memory).segment();
        if (seg != null) {
            seg.unlink();
        }
    }

    void releasePinned(CudaPinnedMemory m) {
        host.release(m);
    }

    /** Device bytes allocated through this backend and not yet freed (leak checks). */
    public long liveDeviceBytes() {
        return deviceBytes.get();
    }

    /** Pinned bytes allocated through this backend and not yet freed (leak checks). */
    public long livePinnedBytes() {
        return host.liveBytes();
    }

    /** Streams created or wrapped and not yet closed (leak checks). */
    public int liveStreams() {
        return streams.size();
    }

    // ---- streams and events ----

    @Override
    public RuntimeStream createStream(int device, String label) {
        checkDevice(device);
        memOps.check(this, device);
        kernels.forDevice(device); // compile or load the kernels at init, not at the first reduction
        CudaStream s = new CudaStream(this, device, label, newStream(device, label), true);
        streams.add(s);
        return s;
    }

    /** Asks each owned stream of the device (cudaStreamQuery) under its monitor, which its close() holds too. */
    @Override
    public List<RuntimeStream> busyStreams(int device) {
        List<RuntimeStream> busy = new ArrayList<>();
        for (CudaStream s : streams) {
            if (s.owned() && s.device() == device) {
                synchronized (s) {
                    if (!s.isIdle() && !s.isCapturing()) { // isIdle answers a capture busy: ask only then
                        busy.add(s);
                    }
                }
            }
        }
        return busy;
    }

    QueryPacing queryPacing() {
        return queryPacing;
    }

    static CUstream_st newStream(int device, String label) {
        CUstream_st h = new CUstream_st();
        int previous = Devices.enter(device);
        try {
            CudaCheck.rt(cudart.cudaStreamCreateWithFlags(h, cudart.cudaStreamNonBlocking),
                    "cudaStreamCreateWithFlags(" + label + ", device " + device + ")");
        } finally {
            Devices.exit(previous);
        }
        return h;
    }

    /**
     * A stream that enqueues onto a {@code cudaStream_t} FlexLink does not own (a framework's, or one
     * made with bytedeco's cudart), for {@code device} (the legacy default stream when the address is 0);
     * see {@link WrappedStreams}.
     */
    public CudaStream wrapStream(long streamAddress, int device) {
        return wrappers.wrap(streamAddress, device);
    }

    /** Forgets a closed stream (and its wrapper, for one FlexLink does not own). */
    void streamClosed(CudaStream s) {
        streams.remove(s);
        wrappers.closed(s);
    }

    /** Remembers a stream made or wrapped, for the leak count and for closing at {@link #close()}. */
    void streamOpened(CudaStream s) {
        streams.add(s);
    }

    @Override
    public RuntimeEvent createEvent(int device, boolean timing) {
        checkDevice(device);
        return CudaEvent.create(device, timing);
    }

    @Override
    public RuntimeStream runtimeStream(Stream stream) {
        if (stream instanceof CudaStream && ((CudaStream) stream).backend() == this) {
            return (CudaStream) stream;
        }
        throw new FlexLinkException(Result.INVALID_ARGUMENT, "stream: " + stream
                + " was not created by this cuda backend (wrap a cudaStream_t with CudaBackend.wrapStream)");
    }

    // ---- synchronous helpers ----

    @Override
    public void upload(long dst, ByteBuffer src) {
        sync.upload(dst, src);
    }

    @Override
    public void download(ByteBuffer dst, long src) {
        sync.download(dst, src);
    }

    @Override
    public void fill(long dst, long bytes, byte value) {
        sync.fill(dst, bytes, value);
    }

    @Override
    public PrimaryTransport primaryTransport() {
        return nccl;
    }

    /**
     * This backend, whose primary path creates its NCCL communicators with {@code tuning} (the fields of NCCL's
     * ncclConfig_t that tune NCCL): pass it to {@code FlexLink.initRank} or {@code initAll}; the communicators'
     * splits have the same tuning. Closing it does not close this backend.
     */
    public Backend tuned(NcclTuning tuning) {
        return new NcclTunedBackend(this, nccl.tuned(tuning));
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        List<CudaStream> all = new ArrayList<>(streams);
        for (CudaStream s : all) {
            s.close();
        }
        sync.close();
        kernels.close();
        LOG.debug("INIT cuda backend closed: {} device bytes, {} pinned bytes still allocated",
                deviceBytes.get(), host.liveBytes());
    }

    @Override
    public String toString() {
        return "cuda backend (" + devices + " devices)";
    }
}
