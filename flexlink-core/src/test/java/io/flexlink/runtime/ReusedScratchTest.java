package io.flexlink.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.host.HostBackend;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Scratch reused call after call: a fill waits for the last marked read, on whatever stream it comes (one
 * wrapper may stand for several CUDA streams), and a captured call neither waits nor marks. The streams'
 * operations are counted.
 */
class ReusedScratchTest {
    /** A host stream that notes every waitEvent and record enqueued on it. */
    private static RuntimeStream noting(RuntimeStream s, String name, List<String> ops) {
        return (RuntimeStream) Proxy.newProxyInstance(RuntimeStream.class.getClassLoader(),
                new Class<?>[] {RuntimeStream.class}, (proxy, m, args) -> {
                    if (m.getName().equals("waitEvent") || m.getName().equals("record")) {
                        ops.add(name + "." + m.getName());
                    }
                    try {
                        return m.invoke(s, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }

    @Test
    void aFillWaitsForTheLastMarkedReadAndACapturedCallNeitherWaitsNorMarks() {
        try (HostBackend host = new HostBackend(FlexLinkConfig.builder().build())) {
            List<String> ops = new ArrayList<>();
            RuntimeStream a = host.createStream(0, "a");
            RuntimeStream b = host.createStream(0, "b");
            RuntimeStream na = noting(a, "a", ops);
            RuntimeStream nb = noting(b, "b", ops);
            try (ReusedScratch s = new ReusedScratch(host, 0)) {
                long first = s.fill(100, na, false);
                assertTrue(first != 0);
                s.read(na, false);
                assertEquals(List.of("a.record"), ops, "the first fill waits for nothing");
                ops.clear();
                assertEquals(first, s.fill(100, na, false), "the same memory");
                s.read(na, false);
                assertEquals(List.of("a.waitEvent", "a.record"), ops, "the same wrapper waits too");
                ops.clear();
                s.fill(100, nb, false);
                s.read(nb, false);
                assertEquals(List.of("b.waitEvent", "b.record"), ops, "another stream waits for the last read");
                ops.clear();
                s.fill(100, na, true);
                s.read(na, true);
                assertEquals(List.of(), ops, "a captured call neither waits nor marks");
                s.fill(100, na, false);
                assertEquals(List.of("a.waitEvent"), ops, "the last eager read was b's");
            }
            a.synchronize();
            b.synchronize();
            a.close();
            b.close();
        }
    }
}
