package io.flexlink.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.FlexLink;
import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.config.Setting;
import io.flexlink.runtime.host.HostBackend;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A configuration is resolved and checked once, as a whole, when a backend or a communicator is made:
 * a bad value fails there with INVALID_ARGUMENT naming the setting and its variable, whichever setting it
 * is and whether or not that communicator would have read it; nothing is read again later.
 */
class ConfigAtCreationTest {
    private static HostBackend backend;

    @BeforeAll
    static void open() {
        backend = new HostBackend(FlexLinkConfig.builder().build());
    }

    @AfterAll
    static void close() {
        assertEquals(0, backend.liveBytes());
        backend.close();
    }

    private static FlexLinkException refusedAtCreation(FlexLinkConfig config) {
        FlexLinkException e = assertThrows(FlexLinkException.class, () -> FlexLink.initAll(backend, config, 0, 1));
        assertEquals(Result.INVALID_ARGUMENT, e.result(), e.getMessage());
        assertEquals(0, backend.liveStreams(), "nothing was made");
        return e;
    }

    @ParameterizedTest(name = "{0}={1}")
    @CsvSource(delimiter = '|', value = {
        "flexlink.chunkBytes      | 1                  | must be in [4K, 1G]",
        "flexlink.chunkBytes      | 4095               | must be in [4K, 1G]",
        "flexlink.chunkBytes      | 2G                 | must be in [4K, 1G]",
        "flexlink.chunkBytes      | eight              | not a size in bytes",
        "flexlink.slots           | 1                  | must be in [2, 256]",
        "flexlink.slots           | 99999999999        | not a whole number",
        "flexlink.minSplitBytes   | -1                 | not a size in bytes",
        "flexlink.timeout         | 153722867280913m   | too long",
        "flexlink.timeout         | 5 minutes          | not a duration",
        "flexlink.initTimeout     | 0                  | must be positive",
        "flexlink.share           | pcie=0.2,pcie=0.3  | given twice",
        "flexlink.share           | pcie=lots          | not a number",
        "flexlink.emulate         | pcie:fast          | rate 'fast'",
        "flexlink.numa            | sometimes          | not one of auto|off|force",
        "flexlink.balance.window  | 0                  | must be in [1, ",
        "flexlink.shm.dir         | /dev/shm/\u0000x   | not a file path",
    })
    void aBadValueFailsAtCreationNamingTheSettingAndItsVariable(String property, String value, String why) {
        Setting<?> setting = FlexLinkConfig.settings().stream().filter(s -> s.property().equals(property))
                .findFirst().orElseThrow();
        FlexLinkException e = refusedAtCreation(FlexLinkConfig.builder().set(setting, value).build());
        assertTrue(e.getMessage().contains(property + " (" + setting.env() + "): cannot use '" + value + "'"),
                e.getMessage());
        assertTrue(e.getMessage().contains(why), e.getMessage());
        FlexLinkException b = assertThrows(FlexLinkException.class,
                () -> new HostBackend(FlexLinkConfig.builder().set(setting, value).build()));
        assertEquals(Result.INVALID_ARGUMENT, b.result(), "a backend checks its configuration too");
    }

    @Test
    void everyBadSettingIsReportedAtOnceAndTheSecretIsNeverEchoed() {
        FlexLinkConfig bad = FlexLinkConfig.builder().set(FlexLinkConfig.CHUNK_BYTES, "1")
                .environment(Map.of("FLEXLINK_SLOTS", "x", "FLEXLINK_SECRET", "0123456789abcdef"))
                .set(FlexLinkConfig.PATHS, "primary").set(FlexLinkConfig.SHARE, "pcie=0.3").build();
        String m = refusedAtCreation(bad).getMessage();
        for (String named : new String[] {"flexlink.chunkBytes (FLEXLINK_CHUNK_BYTES)", "flexlink.slots (FLEXLINK_SLOTS)",
                "flexlink.secret (FLEXLINK_SECRET): cannot use '<hidden>'", "gives a share to path 'pcie'"}) {
            assertTrue(m.contains(named), named + " in " + m);
        }
        assertFalse(m.contains("0123456789abcdef"), m);
    }

    @Test
    void aConcludedConfigurationIsNotReadAgain() {
        FlexLinkConfig c = FlexLinkConfig.builder().environment(Map.of()).build().conclude();
        System.setProperty("flexlink.slots", "6");
        try {
            assertEquals(4, c.slots(), "resolved once");
            assertEquals(6, FlexLinkConfig.builder().environment(Map.of()).build().slots(), "a new one reads it");
            System.setProperty("flexlink.slots", "1");
            assertEquals(4, c.slots(), "and a concluded one never fails later");
        } finally {
            System.clearProperty("flexlink.slots");
        }
    }
}
