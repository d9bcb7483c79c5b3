package io.flexlink.nvshmem;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.flexlink.FlexLinkException;
import io.flexlink.path.StagedPath;
import io.flexlink.Result;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.PinnedMemory;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
import io.flexlink.sync.EnqueueBudget;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import org.junit.jupiter.api.Test;

/** An NvshmemPath whose construction fails part way gives back what it had made (host backend, no GPU). */
class NvshmemPathCleanupTest {

    /** The host backend, except that {@code createEvent} fails. */
    private static Backend failingEvents(HostBackend host, FlexLinkException failure) {
        return (Backend) Proxy.newProxyInstance(Backend.class.getClassLoader(), new Class<?>[] {Backend.class},
                (proxy, method, args) -> {
                    if (method.getName().equals("createEvent")) {
                        throw failure;
                    }
                    try {
                        return method.invoke(host, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }

    @Test
    void aFailingConstructorClosesItsStreamsAndMemory() {
        FlexLinkConfig config = FlexLinkConfig.builder().set(FlexLinkConfig.HOST_DEVICES, "1").build();
        try (HostBackend host = new HostBackend(config)) {
            long total = NvshmemChannel.totalBytes(1, 2, 1024);
            try (PinnedMemory heap = host.allocatePinned(total)) {
                long bytes = host.liveBytes();
                int streams = host.liveStreams();
                NvshmemOps ops = new NoOps();
                NvshmemChannel channel = new NvshmemChannel(host, ops, new Object(), heap, 0, 0, 1, 2, 1024,
                        heap.deviceAddress(), true);
                FlexLinkException failure = new FlexLinkException(Result.SYSTEM_ERROR, "createEvent: test");
                FlexLinkException thrown = assertThrows(FlexLinkException.class, () -> new StagedPath("nvshmem",
                        failingEvents(host, failure), channel, 0, 1, 0, true, EnqueueBudget.ONE_RANK_PER_THREAD));
                assertSame(failure, thrown);
                assertEquals(streams, host.liveStreams(), "streams left open");
                assertEquals(bytes, host.liveBytes(), "pinned memory left allocated");
            }
        }
    }

    private static final class NoOps implements NvshmemOps {
        @Override
        public int useDevice(int device) {
            return -1;
        }

        @Override
        public void restoreDevice(int previous) {
        }

        @Override
        public void putSignal(RuntimeStream stream, long dst, long src, long bytes, long signal, long value, int pe) {
        }

        @Override
        public void setSignal(RuntimeStream stream, long signal, long value, int pe) {
        }

        @Override
        public void waitAtLeast(RuntimeStream stream, long signal, long value) {
        }

        @Override
        public void quiet(RuntimeStream stream) {
        }

        @Override
        public void barrier(RuntimeStream stream) {
        }
    }
}
