package io.flexlink.reliability;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.runtime.ForwardingBackend;
import io.flexlink.runtime.MemoryPlacement;
import io.flexlink.runtime.PinnedMemory;
import io.flexlink.runtime.RuntimeEvent;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
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
final class FailingBackend extends ForwardingBackend {
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
        super(host);
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
    public RuntimeStream createStream(int device, String label) {
        maybeFail("createStream");
        return host.createStream(device, label);
    }

    @Override
    public RuntimeEvent createEvent(int device, boolean timing) {
        maybeFail("createEvent");
        return host.createEvent(device, timing);
    }
}
