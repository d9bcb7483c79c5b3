package io.flexlink.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.FlexLinkException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ConfigDocTest {
    @Test
    void committedPageIsGeneratedFromTheConfigClass() throws Exception {
        Path doc = Path.of("..", "docs", "configuration.md");
        assertTrue(Files.exists(doc), "docs/configuration.md exists");
        String committed = Files.readString(doc, StandardCharsets.UTF_8);
        assertEquals(ConfigDoc.markdown(), committed,
                "docs/configuration.md is stale: regenerate it with io.flexlink.config.ConfigDoc");
    }

    @Test
    void overridesBeatPropertiesBeatEnvironmentBeatDefaults() {
        FlexLinkConfig env = FlexLinkConfig.builder().environment(Map.of("FLEXLINK_SLOTS", "6")).build();
        assertEquals(6, env.slots());
        assertEquals(4, FlexLinkConfig.builder().environment(Map.of()).build().slots());
        System.setProperty("flexlink.slots", "5");
        try {
            assertEquals(5, FlexLinkConfig.builder().environment(Map.of("FLEXLINK_SLOTS", "6")).build().slots());
            assertEquals(3, FlexLinkConfig.builder().environment(Map.of("FLEXLINK_SLOTS", "6"))
                    .set(FlexLinkConfig.SLOTS, "3").build().slots());
        } finally {
            System.clearProperty("flexlink.slots");
        }
    }

    @Test
    void valuesAreParsedAndCheckedWithTheSettingNamed() {
        FlexLinkConfig c = FlexLinkConfig.builder().set(FlexLinkConfig.CHUNK_BYTES, "8M")
                .set(FlexLinkConfig.SHARE, "pcie=0.2,nvshmem=0.1")
                .set(FlexLinkConfig.PATHS, "pcie, primary,nvshmem").build();
        assertEquals(8L << 20, c.chunkBytes());
        assertEquals(Map.of("pcie", 0.2, "nvshmem", 0.1), c.shares());
        assertEquals(java.util.List.of("pcie", "primary", "nvshmem"), c.paths());
        FlexLinkException e = assertThrows(FlexLinkException.class,
                () -> FlexLinkConfig.builder().set(FlexLinkConfig.SLOTS, "1").build().slots());
        assertTrue(e.getMessage().contains("flexlink.slots"), e.getMessage());
        e = assertThrows(FlexLinkException.class,
                () -> FlexLinkConfig.builder().set(FlexLinkConfig.PATHS, "primary,tcp").build().paths());
        assertTrue(e.getMessage().contains("tcp"), e.getMessage());
        assertEquals("FLEXLINK_MIN_SPLIT_BYTES", FlexLinkConfig.MIN_SPLIT_BYTES.env());
    }
}
