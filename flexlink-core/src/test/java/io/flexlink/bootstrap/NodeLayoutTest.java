package io.flexlink.bootstrap;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.config.FlexLinkConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Which ranks share a node, as every rank computes it from every rank's node id. */
class NodeLayoutTest {
    @Test
    void nodesAreNumberedByTheirLowestRankAndLocalIndicesByRank() {
        NodeLayout l = NodeLayout.of(new String[] {"b", "b", "a", "a", "c", "c"});
        assertEquals(3, l.nodes());
        assertEquals(2, l.ranksPerNode());
        assertEquals(0, l.nodeOf(1));
        assertEquals(1, l.nodeOf(2));
        assertEquals(1, l.localIndex(3));
        assertArrayEquals(new int[] {4, 5}, l.ranksOn(2));
        assertEquals(3, l.rankAt(1, 1));
        assertTrue(l.nodeMajor());
        assertFalse(l.localMajor());
        assertEquals("nodes 3 × ranks 2", l.describe());
        l.requireUniform();
    }

    @Test
    void roundRobinPlacementIsRecognized() {
        NodeLayout l = NodeLayout.of(new String[] {"a", "b", "a", "b"});
        assertTrue(l.localMajor());
        assertFalse(l.nodeMajor());
        assertEquals(1, l.localIndex(2));
        NodeLayout mixed = NodeLayout.of(new String[] {"a", "b", "b", "a"});
        assertFalse(mixed.localMajor() || mixed.nodeMajor());
    }

    @Test
    void nodesOfDifferentSizesAreRefusedNamingThem() {
        NodeLayout l = NodeLayout.of(new String[] {"a", "a", "a", "b", "b"});
        assertEquals(-1, l.ranksPerNode());
        FlexLinkException e = assertThrows(FlexLinkException.class, l::requireUniform);
        assertEquals(Result.INVALID_USAGE, e.result());
        assertTrue(e.getMessage().contains("node 'a' has 3 (ranks [0, 1, 2])")
                && e.getMessage().contains("node 'b' has 2 (ranks [3, 4])"), e.getMessage());
    }

    @Test
    void theDerivedIdIsHostBootAndSharedMemoryAndTheSettingReplacesIt(@TempDir Path other) throws Exception {
        FlexLinkConfig plain = FlexLinkConfig.builder().environment(Map.of()).build();
        String id = NodeIdentity.of(plain);
        String[] parts = id.split("/");
        assertEquals(3, parts.length, id);
        assertEquals(NodeIdentity.hostName(), parts[0]);
        if (Files.exists(Path.of("/proc/sys/kernel/random/boot_id"))) {
            assertTrue(parts[1].matches("[0-9a-f-]{36}"), "the kernel's boot id: " + parts[1]);
        }
        assertEquals(parts[0], NodeIdentity.displayName(id));
        // another shared-memory directory (a container's own /dev/shm) is another node
        FlexLinkConfig elsewhere = FlexLinkConfig.builder().environment(Map.of("FLEXLINK_SHM_DIR", other.toString()))
                .build();
        assertNotEquals(id, NodeIdentity.of(elsewhere));
        FlexLinkConfig given = FlexLinkConfig.builder().environment(Map.of("FLEXLINK_NODE_ID", "rack3-node7")).build();
        assertEquals("rack3-node7", NodeIdentity.of(given));
        assertEquals("rack3-node7", NodeIdentity.displayName("rack3-node7"));
        FlexLinkConfig huge = FlexLinkConfig.builder().set(FlexLinkConfig.NODE_ID, "x".repeat(600)).build();
        FlexLinkException e = assertThrows(FlexLinkException.class, () -> NodeIdentity.of(huge));
        assertTrue(e.getMessage().contains("flexlink.nodeId"), e.getMessage());
    }
}
