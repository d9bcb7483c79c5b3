package io.flexlink.comm;

import io.flexlink.runtime.Backend;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.ForwardingBackend;
import io.flexlink.runtime.PinnedMemory;
import io.flexlink.runtime.RuntimeEvent;
import io.flexlink.runtime.RuntimeStream;

/**
 * The backend as creation hands it to the paths and the communicator: while creation goes on, the
 * streams, events, device memory and private pinned memory it makes are registered in the
 * {@link CreationLog}, so that what a constructor made before it failed is freed too (their close is
 * idempotent, so an owner that already freed them is harmless). Shared memory is not: each open of it
 * holds one reference, which only its opener may drop, so the factory registers what it opens itself.
 * After creation every call simply goes to the real backend.
 */
final class CreationBackend extends ForwardingBackend {
    private final CreationLog log;

    CreationBackend(Backend backend, CreationLog log) {
        super(backend);
        this.log = log;
    }

    private <T extends AutoCloseable> T made(T thing) {
        return log.open() ? log.add(thing) : thing;
    }

    @Override
    public DeviceMemory allocate(int device, long bytes) {
        return made(super.allocate(device, bytes));
    }

    @Override
    public PinnedMemory allocatePinned(long bytes) {
        return made(super.allocatePinned(bytes));
    }

    @Override
    public RuntimeStream createStream(int device, String label) {
        return made(super.createStream(device, label));
    }

    @Override
    public RuntimeEvent createEvent(int device, boolean timing) {
        return made(super.createEvent(device, timing));
    }

    /** The application owns the real backend: a communicator never closes it. */
    @Override
    public void close() {
    }
}
