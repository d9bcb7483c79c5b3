package io.flexlink.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.ForwardingBackend;
import io.flexlink.runtime.PinnedMemory;
import io.flexlink.runtime.host.HostBackend;
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
                    return new PinnedMemory() {
                        @Override
                        public long hostAddress() {
                            return real.hostAddress();
                        }

                        @Override
                        public long deviceAddress() {
                            return real.deviceAddress();
                        }

                        @Override
                        public long byteSize() {
                            return real.byteSize();
                        }

                        @Override
                        public String name() {
                            return real.name();
                        }

                        @Override
                        public int readCounter(long offset) {
                            return real.readCounter(offset);
                        }

                        @Override
                        public void writeCounter(long offset, int value) {
                            if (freeing.get()) {
                                writesWhileFreeing.incrementAndGet();
                            }
                            real.writeCounter(offset, value);
                        }

                        @Override
                        public void close() {
                            freeing.set(true);
                            // an openEvery that reached this gate before the close took it out of the set
                            Thread teardown = new Thread(() -> made.get().open(), "teardown");
                            teardown.start();
                            try {
                                teardown.join(10_000); // a bound for the failure only: it returns at once when it can
                            } catch (InterruptedException e) {
                                interrupted.set(e);
                            }
                            openedDuringTheFree.set(!teardown.isAlive());
                            real.close();
                        }
                    };
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
