package io.flexlink.comm;

import io.flexlink.Stream;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.MemoryPlacement;
import io.flexlink.runtime.PinnedMemory;
import io.flexlink.runtime.PrimaryTransport;
import io.flexlink.runtime.RuntimeEvent;
import io.flexlink.runtime.RuntimeStream;
import java.nio.ByteBuffer;

/**
 * The backend as creation hands it to the paths and the communicator: while creation goes on, the
 * streams, events, device memory and private pinned memory it makes are registered in the
 * {@link CreationLog}, so that what a constructor made before it failed is freed too (their close is
 * idempotent, so an owner that already freed them is harmless). Shared memory is not: each open of it
 * holds one reference, which only its opener may drop, so the factory registers what it opens itself.
 * After creation every call simply goes to the real backend. Every method of {@link Backend} is
 * forwarded (a test checks it), so that none falls back to a default the real backend overrides.
 */
final class CreationBackend implements Backend {
    private final Backend backend;
    private final CreationLog log;

    CreationBackend(Backend backend, CreationLog log) {
        this.backend = backend;
        this.log = log;
    }

    private <T extends AutoCloseable> T made(T thing) {
        return log.open() ? log.add(thing) : thing;
    }

    @Override
    public String name() {
        return backend.name();
    }

    @Override
    public int deviceCount() {
        return backend.deviceCount();
    }

    @Override
    public DeviceMemory allocate(int device, long bytes) {
        return made(backend.allocate(device, bytes));
    }

    @Override
    public PinnedMemory allocatePinned(long bytes) {
        return made(backend.allocatePinned(bytes));
    }

    @Override
    public PinnedMemory createShared(long bytes) {
        return backend.createShared(bytes);
    }

    @Override
    public PinnedMemory createShared(long bytes, String purpose) {
        return backend.createShared(bytes, purpose);
    }

    @Override
    public PinnedMemory createShared(long bytes, String purpose, boolean crossProcess) {
        return backend.createShared(bytes, purpose, crossProcess);
    }

    @Override
    public PinnedMemory createShared(long bytes, String purpose, boolean crossProcess, MemoryPlacement placement) {
        return backend.createShared(bytes, purpose, crossProcess, placement);
    }

    @Override
    public PinnedMemory openShared(String name, long bytes) {
        return backend.openShared(name, bytes);
    }

    @Override
    public void sharedMapped(PinnedMemory memory) {
        backend.sharedMapped(memory);
    }

    @Override
    public RuntimeStream createStream(int device, String label) {
        return made(backend.createStream(device, label));
    }

    @Override
    public RuntimeEvent createEvent(int device, boolean timing) {
        return made(backend.createEvent(device, timing));
    }

    @Override
    public PrimaryTransport primaryTransport() {
        return backend.primaryTransport();
    }

    @Override
    public void upload(long dst, ByteBuffer src) {
        backend.upload(dst, src);
    }

    @Override
    public void download(ByteBuffer dst, long src) {
        backend.download(dst, src);
    }

    @Override
    public void fill(long dst, long bytes, byte value) {
        backend.fill(dst, bytes, value);
    }

    @Override
    public RuntimeStream runtimeStream(Stream stream) {
        return backend.runtimeStream(stream);
    }

    @Override
    public String fingerprint() {
        return backend.fingerprint();
    }

    /** The application owns the real backend: a communicator never closes it. */
    @Override
    public void close() {
    }

    @Override
    public String toString() {
        return backend.toString();
    }
}
