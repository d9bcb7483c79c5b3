package io.flexlink.comm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Collective;
import io.flexlink.DataType;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.PinnedMemory;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The watchdog's ring of call records grows (allocating records and events) only for calls that are still
 * unfinished: its rounds are up to 100 ms apart, and a tight loop of finished calls used to grow it call
 * after call (786 bytes per 8-byte AllReduce on the H200).
 */
class CallWatchRingTest {
    private static Backend countingEvents(HostBackend host, AtomicInteger events) {
        return (Backend) Proxy.newProxyInstance(Backend.class.getClassLoader(), new Class<?>[] {Backend.class},
                (proxy, m, args) -> {
                    if (m.getName().equals("createEvent")) {
                        events.incrementAndGet();
                    }
                    try {
                        return m.invoke(host, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }

    @Test
    void finishedCallsAreRetiredInsteadOfGrowingTheRing() {
        try (HostBackend host = new HostBackend(FlexLinkConfig.builder().build())) {
            AtomicInteger events = new AtomicInteger();
            CallWatch watch = new CallWatch(countingEvents(host, events), 0, 1_000_000_000L);
            assertEquals(CallWatch.RING, events.get());
            RuntimeStream s = host.createStream(0, "user");
            for (int i = 0; i < 10 * CallWatch.RING; i++) {
                watch.record(s, Collective.ALL_REDUCE, 2, DataType.FLOAT32, i);
                s.synchronize(); // the call is done before the next one
            }
            assertEquals(CallWatch.RING, events.get(), "no record was added for finished calls");

            PinnedMemory gate = host.allocatePinned(64);
            s.waitValue32(gate, 0, 1); // every later call stays unfinished until the gate opens
            for (int i = 0; i < 2 * CallWatch.RING; i++) {
                watch.record(s, Collective.ALL_REDUCE, 2, DataType.FLOAT32, 1000 + i);
            }
            assertEquals(2 * CallWatch.RING, events.get(), "unfinished calls grow the ring (doubling it once here)");
            gate.writeCounter(0, 1);
            s.synchronize();
            s.close();
            gate.close();
        }
    }
}
