package io.flexlink.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Collective;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.UniqueId;
import io.flexlink.config.ByteSizes;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.RuntimeEvent;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
import java.net.InetAddress;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * The cases found outside the documented model (issue: bare IllegalArgumentException, NullPointerException,
 * OutOfMemoryError from public entry points), each now a FlexLinkException with its result and a message
 * naming the argument. {@code PublicApiExceptionsTest} sweeps the same entry points with random arguments.
 */
class ExceptionModelTest {
    private static final FlexLinkConfig CONFIG = FlexLinkConfig.builder().build();

    private static void throwsOnly(Result result, String named, Executable call) {
        FlexLinkException e = assertThrows(FlexLinkException.class, call);
        assertEquals(result, e.result(), e.getMessage());
        assertTrue(e.detail().contains(named), e.getMessage());
    }

    @Test
    void uniqueIdsRefuseBadPortsHostsAndText() {
        throwsOnly(Result.INVALID_ARGUMENT, "port: 70000 is not in [0, 65535]", () -> FlexLink.getUniqueId("127.0.0.1", 70000));
        throwsOnly(Result.INVALID_ARGUMENT, "port: -1", () -> FlexLink.getUniqueId("127.0.0.1", -1));
        throwsOnly(Result.INVALID_ARGUMENT, "host: null", () -> FlexLink.getUniqueId((InetAddress) null, 0));
        throwsOnly(Result.INVALID_ARGUMENT, "host: null", () -> FlexLink.getUniqueId((String) null, 0));
        throwsOnly(Result.INVALID_ARGUMENT, "uniqueId: null", () -> UniqueId.fromBase64(null));
    }

    @Test
    void entryPointsRefuseNullsAndImpossibleRankCounts() {
        try (HostBackend backend = new HostBackend(CONFIG)) {
            throwsOnly(Result.INVALID_ARGUMENT, "backend: null", () -> FlexLink.initAll(null, CONFIG, 0));
            throwsOnly(Result.INVALID_ARGUMENT, "backend: null", () -> FlexLink.initRank(null, CONFIG, 1, UniqueId.random(), 0, 0));
            throwsOnly(Result.INVALID_ARGUMENT, "env: null", () -> FlexLink.initFromEnv(backend, CONFIG, null));
            throwsOnly(Result.INVALID_ARGUMENT, "nranks: 2147483647, at most 4096",
                    () -> FlexLink.initRank(backend, CONFIG, Integer.MAX_VALUE, UniqueId.random(), 0, 0));
            throwsOnly(Result.INVALID_ARGUMENT, "devices: 5000 ranks", () -> FlexLink.initAll(backend, CONFIG, new int[5000]));
            throwsOnly(Result.INVALID_ARGUMENT, "WORLD_SIZE: 100000", () -> FlexLink.initFromEnv(backend, CONFIG,
                    Map.of("RANK", "1", "WORLD_SIZE", "100000", "MASTER_ADDR", "127.0.0.1", "MASTER_PORT", "1")));
            assertEquals(0, backend.liveStreams(), "nothing was made");
        }
    }

    @Test
    void parsersAndTheConfigurationRefuseNulls() {
        throwsOnly(Result.INVALID_ARGUMENT, "datatype: null", () -> DataType.parse(null));
        throwsOnly(Result.INVALID_ARGUMENT, "collective: null", () -> Collective.parse(null));
        throwsOnly(Result.INVALID_ARGUMENT, "size: null", () -> ByteSizes.parse(null));
        throwsOnly(Result.INVALID_ARGUMENT, "setting: null", () -> CONFIG.get(null));
        throwsOnly(Result.INVALID_ARGUMENT, "setting: null", () -> CONFIG.raw(null));
        throwsOnly(Result.INVALID_ARGUMENT, "flexlink.slots: value null", () -> CONFIG.with(FlexLinkConfig.SLOTS, null));
        throwsOnly(Result.INVALID_ARGUMENT, "environment: null", () -> FlexLinkConfig.builder().environment(null));
    }

    @Test
    void aClosedBackendMakesNothingAndARefusedRecordLeavesItsEventUsable() {
        HostBackend backend = new HostBackend(CONFIG);
        RuntimeEvent event = backend.createEvent(0, false);
        RuntimeStream closed = backend.createStream(0, "closed");
        closed.close();
        throwsOnly(Result.INVALID_USAGE, "used after close", () -> closed.record(event));
        assertTrue(event.isComplete(), "the refused record did not count: a wait for the event would never end");
        throwsOnly(Result.INVALID_ARGUMENT, "label: null", () -> backend.createStream(0, null));
        throwsOnly(Result.INVALID_ARGUMENT, "name: null", () -> backend.openShared(null, 8));
        throwsOnly(Result.INVALID_ARGUMENT, "bytes: negative size -5", () -> backend.createShared(-5, "pcie", true));
        backend.close();
        throwsOnly(Result.INVALID_USAGE, "host backend: used after close", () -> backend.allocate(0, 8));
        throwsOnly(Result.INVALID_USAGE, "host backend: used after close", () -> backend.createStream(0, "late"));
        assertEquals(0, backend.liveStreams());
    }
}
