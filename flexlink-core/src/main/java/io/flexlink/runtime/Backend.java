package io.flexlink.runtime;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import java.nio.ByteBuffer;
import java.util.List;

/**
 * What FlexLink needs from a device runtime. Two implementations exist: the host backend
 * ({@code io.flexlink.runtime.host}), where CPU threads play streams and off-heap memory plays device
 * memory, and the CUDA backend in flexlink-native. The engine and the staging protocol are written
 * against this interface only, so the host backend proves the very code that runs on GPUs.
 */
public interface Backend extends AutoCloseable {
    /** {@code host} or {@code cuda}. */
    String name();

    /** Number of devices this backend can place ranks on. */
    int deviceCount();

    /** Allocates device memory on {@code device}. */
    DeviceMemory allocate(int device, long bytes);

    /**
     * Allocates pinned host memory that every device of this process can read and write (CUDA:
     * {@code cudaHostAlloc(Portable|Mapped)}), zero-filled. Counters for {@link RuntimeStream#waitValue32}
     * live in such memory.
     */
    PinnedMemory allocatePinned(long bytes);

    /**
     * Creates zero-filled pinned memory that other ranks open by {@link PinnedMemory#name()} through
     * {@link #openShared}; the staging areas of communicators live in it.
     */
    PinnedMemory createShared(long bytes);

    /**
     * Like {@link #createShared(long)}, for the named {@code purpose} ({@code pcie}, {@code primary},
     * {@code board}); the host backend's link emulation throttles transfers by purpose.
     */
    default PinnedMemory createShared(long bytes, String purpose) {
        return createShared(bytes);
    }

    /**
     * Like {@link #createShared(long, String)}; with {@code crossProcess} the memory must be mappable by
     * other processes of this machine (a file in {@code /dev/shm}, see {@code io.flexlink.runtime.shm}),
     * and its name then says so, so that {@link #openShared} in another process maps it. Backends that
     * cannot share memory between processes refuse.
     */
    default PinnedMemory createShared(long bytes, String purpose, boolean crossProcess) {
        if (crossProcess) {
            throw new FlexLinkException(Result.INVALID_USAGE,
                    "the " + name() + " backend cannot share staging memory between processes");
        }
        return createShared(bytes, purpose);
    }

    /**
     * Like {@link #createShared(long, String, boolean)}, with each region's pages placed on the NUMA node of
     * the device it serves where the host has several (CUDA backend); others ignore the placement.
     */
    default PinnedMemory createShared(long bytes, String purpose, boolean crossProcess, MemoryPlacement placement) {
        return createShared(bytes, purpose, crossProcess);
    }

    /** Opens memory that another rank created with {@link #createShared}. */
    PinnedMemory openShared(String name, long bytes);

    /**
     * Called on every rank once every rank has opened {@code memory}: memory backed by a named file
     * removes the name now (the mapping lives on), so that nothing is left behind however the processes
     * end. A no-op for memory of one process.
     */
    default void sharedMapped(PinnedMemory memory) {
    }

    /**
     * What names {@code device} alike in every process of this node, whatever ordinal each process gives it:
     * ranks whose keys are equal share one device ({@link RankDevices}). CUDA: the device's PCI bus id, which
     * {@code CUDA_VISIBLE_DEVICES} does not renumber. By default the backend's name and the ordinal (devices the
     * processes number alike).
     */
    default String deviceKey(int device) {
        return name() + ":" + device;
    }

    /**
     * How many streams of one device this process runs independently of one another. Beyond that many, streams
     * share hardware queues and run in submission order, so a stream waiting on a flag can hold back another
     * rank's stream that writes it (CUDA: {@code CUDA_DEVICE_MAX_CONNECTIONS}, 8 unless set). Unbounded by
     * default (the host backend's streams are threads of their own).
     */
    default int streamQueues() {
        return Integer.MAX_VALUE;
    }

    /**
     * The streams of {@code device} this backend made that still have work to run (a stream being captured holds
     * nothing that runs; streams it only wraps are the application's). An aborted communicator's teardown waits
     * for those it found busy before it frees: CUDA's {@code cudaFree} waits for the whole device, and where ranks
     * of this process share a GPU a peer's stream may wait for a handshake word that only the abort's repeated
     * releases let go, or for a write that the thread blocked in that free would make next. Safe from any thread,
     * also while another closes a stream. None by default: the host backend's frees wait for no stream.
     */
    default List<RuntimeStream> busyStreams(int device) {
        return List.of();
    }

    /** Creates a stream on {@code device}; {@code label} names its role in logs and link emulation. */
    RuntimeStream createStream(int device, String label);

    /** Creates an event on {@code device}, with timing when {@code timing} is true. */
    RuntimeEvent createEvent(int device, boolean timing);

    /** The native collectives of this backend (NCCL on CUDA, a ring through host memory on the host). */
    PrimaryTransport primaryTransport();

    /** Synchronous copy of {@code src}'s remaining bytes to device (or pinned) address {@code dst}. */
    void upload(long dst, ByteBuffer src);

    /** Synchronous copy of {@code dst.remaining()} bytes from device (or pinned) address {@code src}. */
    void download(ByteBuffer dst, long src);

    /** Synchronous fill of {@code bytes} bytes at {@code dst} with {@code value}. */
    void fill(long dst, long bytes, byte value);

    /**
     * Why {@code bytes} bytes at {@code address} are not memory that work of {@code device} may use, where
     * this backend can tell cheaply: null when they are, or when it cannot tell (the default: CUDA answers
     * a foreign or freed address with an error code of its own). The host backend, whose device memory is
     * process memory, knows its live allocations and must refuse the rest: touching them would crash the
     * process. Called for every collective's buffers before anything is enqueued, so it must not allocate.
     */
    default String accessProblem(long address, long bytes, int device) {
        return null;
    }

    /** The stream behind a user-facing {@link io.flexlink.Stream}, or an exception if it is not ours. */
    RuntimeStream runtimeStream(io.flexlink.Stream stream);

    /**
     * What identifies this machine's links for the tuning cache: GPU models, count, PCIe and NVLink
     * (CUDA), or the emulated link speeds (host).
     */
    default String fingerprint() {
        return name();
    }

    /** Releases what this backend holds; idempotent. */
    @Override
    void close();
}
