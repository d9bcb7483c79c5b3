package io.flexlink.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.ForwardingBackend;
import io.flexlink.runtime.PinnedMemory;
import io.flexlink.runtime.host.HostBackend;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * A gate's close frees its word outside the gate's lock. On CUDA that free waits for the whole device, where another
 * communicator's held stream may wait for a teardown's {@link GroupGate#openEvery}, which takes each gate's lock in
 * turn: an {@code openEvery} that took this gate from the process's set just before the close removed it would wait
 * for the lock, and the gates after it, whose streams the free waits for, would stay shut. Here the word's free waits
 * for another thread's open of this gate to return, as CUDA's would for the stream behind it; and a gate being closed
 * writes nothing more into the word it frees.
 */
class GroupGateCloseTest {
    @Test
    void aGateIsFreedOutsideItsLockSoThatATeardownsOpenEveryGoesOnMeanwhile() throws InterruptedException {
        try (HostBackend host = new HostBackend(FlexLinkConfig.builder().build())) {
            AtomicBoolean openedDuringTheFree = new AtomicBoolean();
            AtomicBoolean freeing = new AtomicBoolean();
            AtomicInteger writesWhileFreeing = new AtomicInteger();
            AtomicReference<InterruptedException> interrupted = new AtomicReference<>();
            AtomicReference<GroupGate> made = new AtomicReference<>();
            ForwardingBackend waitingFree = new ForwardingBackend(host) {
                @Override
                public PinnedMemory allocatePinned(long bytes) {
                    PinnedMemory real = super.allocatePinned(bytes);
                    return (PinnedMemory) Proxy.newProxyInstance(PinnedMemory.class.getClassLoader(),
                            new Class<?>[] {PinnedMemory.class}, (p, m, a) -> {
                                if (m.getName().equals("writeCounter") && freeing.get()) {
                                    writesWhileFreeing.incrementAndGet();
                                } else if (m.getName().equals("close")) {
                                    freeing.set(true);
                                    // an openEvery that reached this gate before the close took it out of the set
                                    Thread teardown = new Thread(() -> made.get().open(), "teardown");
                                    teardown.start();
                                    try {
                                        teardown.join(10_000); // a bound for the failure only: at once when it can
                                    } catch (InterruptedException e) {
                                        interrupted.set(e);
                                    }
                                    openedDuringTheFree.set(!teardown.isAlive());
                                }
                                try {
                                    return m.invoke(real, a);
                                } catch (InvocationTargetException e) {
                                    throw e.getCause();
                                }
                            });
                }
            };
            GroupGate gate = new GroupGate(waitingFree);
            made.set(gate);
            assertEquals(1, gate.hold());
            gate.close();
            gate.close(); // idempotent: freed once
            assertEquals(null, interrupted.get());
            assertTrue(openedDuringTheFree.get(), "another thread's open of the gate returned while its word was freed");
            assertEquals(0, writesWhileFreeing.get(), "writes into the word being freed");
            gate.open(); // closed: writes nothing, and does not fail
            assertEquals(0, writesWhileFreeing.get());
        }
    }
}
