package io.flexlink.runtime;

import io.flexlink.Stream;
import java.nio.ByteBuffer;
import java.util.List;

/**
 * A backend that hands every call to another one, for wrappers that watch or change a few calls (what
 * communicator creation made, injected failures in tests). Every method of {@link Backend} is forwarded
 * here, defaults included, so that a wrapper never falls back to a default the real backend overrides
 * (a test checks it).
 */
public abstract class ForwardingBackend implements Backend {
    private final Backend delegate;

    protected ForwardingBackend(Backend delegate) {
        this.delegate = delegate;
    }

    /** The backend calls go to. */
    protected final Backend delegate() {
        return delegate;
    }

    @Override
    public String name() {
        return delegate.name();
    }

    @Override
    public int deviceCount() {
        return delegate.deviceCount();
    }

    @Override
    public DeviceMemory allocate(int device, long bytes) {
        return delegate.allocate(device, bytes);
    }

    @Override
    public PinnedMemory allocatePinned(long bytes) {
        return delegate.allocatePinned(bytes);
    }

    @Override
    public PinnedMemory createShared(long bytes) {
        return delegate.createShared(bytes);
    }

    @Override
    public PinnedMemory createShared(long bytes, String purpose) {
        return delegate.createShared(bytes, purpose);
    }

    @Override
    public PinnedMemory createShared(long bytes, String purpose, boolean crossProcess) {
        return delegate.createShared(bytes, purpose, crossProcess);
    }

    @Override
    public PinnedMemory createShared(long bytes, String purpose, boolean crossProcess, MemoryPlacement placement) {
        return delegate.createShared(bytes, purpose, crossProcess, placement);
    }

    @Override
    public PinnedMemory openShared(String name, long bytes) {
        return delegate.openShared(name, bytes);
    }

    @Override
    public void sharedMapped(PinnedMemory memory) {
        delegate.sharedMapped(memory);
    }

    @Override
    public RuntimeStream createStream(int device, String label) {
        return delegate.createStream(device, label);
    }

    @Override
    public RuntimeEvent createEvent(int device, boolean timing) {
        return delegate.createEvent(device, timing);
    }

    @Override
    public PrimaryTransport primaryTransport() {
        return delegate.primaryTransport();
    }

    @Override
    public void upload(long dst, ByteBuffer src) {
        delegate.upload(dst, src);
    }

    @Override
    public void download(ByteBuffer dst, long src) {
        delegate.download(dst, src);
    }

    @Override
    public void fill(long dst, long bytes, byte value) {
        delegate.fill(dst, bytes, value);
    }

    @Override
    public String accessProblem(long address, long bytes, int device) {
        return delegate.accessProblem(address, bytes, device);
    }

    @Override
    public RuntimeStream runtimeStream(Stream stream) {
        return delegate.runtimeStream(stream);
    }

    @Override
    public String fingerprint() {
        return delegate.fingerprint();
    }

    @Override
    public String deviceKey(int device) {
        return delegate.deviceKey(device);
    }

    @Override
    public int streamQueues() {
        return delegate.streamQueues();
    }

    @Override
    public List<RuntimeStream> busyStreams(int device) {
        return delegate.busyStreams(device);
    }

    @Override
    public void close() {
        delegate.close();
    }

    @Override
    public String toString() {
        return delegate.toString();
    }
}
