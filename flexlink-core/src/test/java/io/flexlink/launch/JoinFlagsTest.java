package io.flexlink.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.runtime.Backend;
import io.flexlink.runtime.PinnedMemory;
import io.flexlink.runtime.host.HostBackend;
import io.flexlink.sync.Flags;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The join words' lifetime: a communicator's teardown runs its release again after an abort already freed
 * the words, and that second release once wrote into freed memory (a corrupted heap on the host backend).
 */
class JoinFlagsTest {
    /** Host memory that records every host-side write, and which of them came after its close. */
    static final class Recorded {
        final List<String> writes = new ArrayList<>();
        final List<String> afterClose = new ArrayList<>();
        boolean closed;
    }

    private static Backend recording(HostBackend host, Recorded rec) {
        return (Backend) Proxy.newProxyInstance(Backend.class.getClassLoader(), new Class<?>[] {Backend.class},
                (proxy, m, args) -> {
                    try {
                        Object r = m.invoke(host, args);
                        if (!m.getName().equals("allocatePinned")) {
                            return r;
                        }
                        PinnedMemory real = (PinnedMemory) r;
                        return Proxy.newProxyInstance(PinnedMemory.class.getClassLoader(),
                                new Class<?>[] {PinnedMemory.class}, (p2, m2, a2) -> {
                                    if (m2.getName().equals("writeCounter")) {
                                        String w = a2[0] + "=" + a2[1];
                                        (rec.closed ? rec.afterClose : rec.writes).add(w);
                                        if (rec.closed) {
                                            return null; // never into freed memory, even in the failing case
                                        }
                                    }
                                    if (m2.getName().equals("close")) {
                                        rec.closed = true;
                                    }
                                    try {
                                        return m2.invoke(real, a2);
                                    } catch (InvocationTargetException e) {
                                        throw e.getCause();
                                    }
                                });
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }

    @Test
    void aReleaseAfterCloseWritesNothing() {
        try (HostBackend host = new HostBackend(io.flexlink.config.FlexLinkConfig.builder().build())) {
            Recorded rec = new Recorded();
            JoinFlags joins = new JoinFlags(recording(host, rec), 0);
            assertEquals(JoinFlags.RING, rec.writes.size(), "every word starts FREE: " + rec.writes);
            joins.releaseAll();
            assertEquals(2 * JoinFlags.RING, rec.writes.size(), "an abort releases every word: " + rec.writes);
            assertTrue(rec.writes.contains("0=" + Flags.RELEASED), rec.writes.toString());
            joins.close();
            assertTrue(rec.closed, "close frees the words when no stream still uses them");
            joins.releaseAll();
            joins.close();
            assertEquals(List.of(), rec.afterClose, "writes into freed join words");
        }
    }
}
