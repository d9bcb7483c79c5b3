package io.flexlink.testing;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.PinnedMemory;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** The host-cost probes' counting backend: which streams and which threads' calls it counts. */
class PathStreamsTest {
    private static final FlexLinkConfig CONFIG = FlexLinkConfig.builder().set(FlexLinkConfig.BACKEND, "host").build();

    @Test
    void countsThePathsStreamsOnlyAndOnlyTheThreadsItIsToldTo() throws Exception {
        try (HostBackend host = new HostBackend(CONFIG); PinnedMemory word = host.allocatePinned(64)) {
            PathStreams counting = new PathStreams(host, PathStreams.Mode.COUNT);
            RuntimeStream path = counting.createStream(0, "pcie.send");
            RuntimeStream user = counting.createStream(0, "user");
            List<String> heard = new CopyOnWriteArrayList<>();
            counting.listen((label, method, args) -> heard.add(label + " " + method.getName()
                    + (args != null && args.length > 2 ? " " + args[2] : "")));
            try {
                path.writeValue32(word, 0, 1);
                user.writeValue32(word, 0, 2); // not a path's stream: not counted
                counting.countOnly(t -> !t.getName().equals("poller"));
                Thread poller = new Thread(() -> path.writeValue32(word, 0, 3), "poller");
                poller.start();
                poller.join();
                Thread worker = new Thread(() -> path.writeValue32(word, 0, 4), "enqueue-worker");
                worker.start();
                worker.join();
                path.synchronize();
                assertEquals(4, word.readCounter(0), "every write ran, counted or not");
                assertArrayEquals(new long[] {2, 0}, counting.byMethod().get("writeValue32"),
                        "this thread's first write and the worker's, not the poller's");
                assertEquals(List.of("pcie.send writeValue32 1", "pcie.send writeValue32 4", "pcie.send synchronize"),
                        heard, "the listener hears the counted calls, in order");
            } finally {
                path.close();
                user.close();
            }
        }
    }
}
