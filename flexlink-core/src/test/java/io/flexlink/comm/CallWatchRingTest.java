package io.flexlink.comm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Collective;
import io.flexlink.DataType;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.PinnedMemory;
import io.flexlink.runtime.RuntimeEvent;
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

    /** A backend whose events count how often they are asked whether they completed. */
    private static Backend countingQueries(HostBackend host, AtomicInteger queries) {
        return (Backend) Proxy.newProxyInstance(Backend.class.getClassLoader(), new Class<?>[] {Backend.class},
                (proxy, m, args) -> {
                    Object out;
                    try {
                        out = m.invoke(host, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                    if (!m.getName().equals("createEvent")) {
                        return out;
                    }
                    RuntimeEvent event = (RuntimeEvent) out;
                    return Proxy.newProxyInstance(RuntimeEvent.class.getClassLoader(),
                            new Class<?>[] {RuntimeEvent.class, HostEventAccess.class}, (p2, em, eargs) -> {
                                if (em.getName().equals("isComplete") && StackWalker.getInstance().walk(f -> f
                                        .anyMatch(x -> x.getClassName().equals(CallWatch.class.getName())))) {
                                    queries.incrementAndGet(); // the watch's own questions, not the stream's
                                }
                                if (em.getName().equals("unwrap")) {
                                    return event;
                                }
                                try {
                                    return em.invoke(event, eargs);
                                } catch (InvocationTargetException e) {
                                    throw e.getCause();
                                }
                            });
                });
    }

    /** The host stream, given the host events behind proxied ones (it records only its own events). */
    private static RuntimeStream unwrapping(RuntimeStream stream) {
        return (RuntimeStream) Proxy.newProxyInstance(RuntimeStream.class.getClassLoader(),
                new Class<?>[] {RuntimeStream.class}, (proxy, m, args) -> {
                    if (args != null) {
                        for (int i = 0; i < args.length; i++) {
                            if (args[i] instanceof HostEventAccess) {
                                args[i] = ((HostEventAccess) args[i]).unwrap();
                            }
                        }
                    }
                    try {
                        return m.invoke(stream, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }

    /** Lets the host stream record a proxied event (it records only its own events). */
    interface HostEventAccess {
        RuntimeEvent unwrap();
    }

    @Test
    void aRunOfFinishedCallsOnOneStreamIsRetiredWithOneQuery() {
        try (HostBackend host = new HostBackend(FlexLinkConfig.builder().build())) {
            AtomicInteger queries = new AtomicInteger();
            Backend counting = countingQueries(host, queries);
            CallWatch watch = new CallWatch(counting, 0, 1_000_000_000L);
            RuntimeStream s = unwrapping(host.createStream(0, "user"));
            int calls = 40 * CallWatch.RING;
            for (int i = 0; i < calls; i++) {
                watch.record(s, Collective.ALL_REDUCE, 2, DataType.FLOAT32, i);
                s.synchronize(); // finished before the next: one query per call retired them one by one before
            }
            assertTrue(queries.get() <= calls / 8, queries.get() + " completion queries for " + calls
                    + " calls: a full ring must not cost a query per call");
            s.synchronize();
            assertEquals(null, watch.overdue(Long.MAX_VALUE / 4), "every call seen done");
            s.close();
        }
    }

    /** A watchdog round over one unfinished call asks its event once (it is the newest and the oldest at once). */
    @Test
    void aRoundAsksAnUnfinishedCallOnce() {
        try (HostBackend host = new HostBackend(FlexLinkConfig.builder().build())) {
            AtomicInteger queries = new AtomicInteger();
            CallWatch watch = new CallWatch(countingQueries(host, queries), 0, 1_000_000_000L);
            RuntimeStream s = unwrapping(host.createStream(0, "user"));
            PinnedMemory gate = host.allocatePinned(64);
            s.waitValue32(gate, 0, 1);
            watch.record(s, Collective.ALL_REDUCE, 2, DataType.FLOAT32, 0);
            assertEquals(null, watch.overdue(1), "not overdue yet");
            assertEquals(1, queries.get(), "one question about the one unfinished call");
            gate.writeCounter(0, 1);
            s.synchronize();
            assertEquals(null, watch.overdue(2));
            s.close();
            gate.close();
        }
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
