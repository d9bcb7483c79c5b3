package io.flexlink.reliability;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.Stream;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.MemoryPlacement;
import io.flexlink.runtime.PinnedMemory;
import io.flexlink.runtime.PrimaryTransport;
import io.flexlink.runtime.RuntimeEvent;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A host backend whose {@code nth} call of one kind ({@code createShared}, {@code openShared},
 * {@code createStream}, {@code createEvent}) made on one thread fails, as a failed {@code cudaHostRegister},
 * {@code cudaStreamCreate} or {@code cudaEventCreate} would: the stages of a communicator's creation, on
 * one rank (ranks are told apart by the thread that creates them). It also keeps the shared memory it
 * made, so that a test can read its counters.
 */
final class FailingBackend implements Backend {
    /** The injected failure: the {@code nth} call of {@code kind} on thread {@code thread} throws {@code result}. */
    record Fault(String kind, String thread, int nth, Result result) {
        @Override
        public String toString() {
            return kind + " #" + nth + " on " + thread;
        }
    }

    final HostBackend host;
    /** Every piece of shared memory created through this backend (not only by the failing thread). */
    final List<PinnedMemory> created = new CopyOnWriteArrayList<>();
    private volatile Fault fault;
    private final AtomicInteger calls = new AtomicInteger();
    private final AtomicInteger fired = new AtomicInteger();

    FailingBackend(HostBackend host) {
        this.host = host;
    }

    /** Arms {@code f} (null disarms), counting its calls from zero. */
    void arm(Fault f) {
        calls.set(0);
        fired.set(0);
        fault = f;
    }

    /** How often the armed fault fired. */
    int fired() {
        return fired.get();
    }

    private void maybeFail(String kind) {
        Fault f = fault;
        if (f != null && f.kind().equals(kind) && Thread.currentThread().getName().equals(f.thread())
                && calls.incrementAndGet() == f.nth()) {
            fired.incrementAndGet();
            throw new FlexLinkException(f.result(), "injected: " + f);
        }
    }

    private PinnedMemory made(PinnedMemory m) {
        created.add(m);
        return m;
    }

    @Override
    public String name() {
        return host.name();
    }

    @Override
    public int deviceCount() {
        return host.deviceCount();
    }

    @Override
    public DeviceMemory allocate(int device, long bytes) {
        return host.allocate(device, bytes);
    }

    @Override
    public PinnedMemory allocatePinned(long bytes) {
        return host.allocatePinned(bytes);
    }

    @Override
    public PinnedMemory createShared(long bytes) {
        maybeFail("createShared");
        return made(host.createShared(bytes));
    }

    @Override
    public PinnedMemory createShared(long bytes, String purpose) {
        maybeFail("createShared");
        return made(host.createShared(bytes, purpose));
    }

    @Override
    public PinnedMemory createShared(long bytes, String purpose, boolean crossProcess) {
        maybeFail("createShared");
        return made(host.createShared(bytes, purpose, crossProcess));
    }

    @Override
    public PinnedMemory createShared(long bytes, String purpose, boolean crossProcess, MemoryPlacement placement) {
        maybeFail("createShared");
        return made(host.createShared(bytes, purpose, crossProcess, placement));
    }

    @Override
    public PinnedMemory openShared(String name, long bytes) {
        maybeFail("openShared");
        return host.openShared(name, bytes);
    }

    @Override
    public void sharedMapped(PinnedMemory memory) {
        host.sharedMapped(memory);
    }

    @Override
    public RuntimeStream createStream(int device, String label) {
        maybeFail("createStream");
        return host.createStream(device, label);
    }

    @Override
    public RuntimeEvent createEvent(int device, boolean timing) {
        maybeFail("createEvent");
        return host.createEvent(device, timing);
    }

    @Override
    public PrimaryTransport primaryTransport() {
        return host.primaryTransport();
    }

    @Override
    public void upload(long dst, ByteBuffer src) {
        host.upload(dst, src);
    }

    @Override
    public void download(ByteBuffer dst, long src) {
        host.download(dst, src);
    }

    @Override
    public void fill(long dst, long bytes, byte value) {
        host.fill(dst, bytes, value);
    }

    @Override
    public RuntimeStream runtimeStream(Stream stream) {
        return host.runtimeStream(stream);
    }

    @Override
    public String fingerprint() {
        return host.fingerprint();
    }

    @Override
    public void close() {
        host.close();
    }
}
