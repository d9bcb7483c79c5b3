package io.flexlink.hier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Collective;
import io.flexlink.CommStats;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.ReduceOp;
import io.flexlink.UniqueId;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.ForwardingBackend;
import io.flexlink.runtime.MemoryPlacement;
import io.flexlink.runtime.PinnedMemory;
import io.flexlink.runtime.host.HostBackend;
import io.flexlink.runtime.shm.ShmSegment;
import io.flexlink.testing.CollectiveHarness;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Two emulated nodes of two ranks in one process (node by thread through {@code flexlink.nodeId}): every
 * piece of shared memory a node communicator makes (the PCIe path's staging, the host ring) is created by
 * one rank of that node and mapped only by ranks of that node, so node a and node b never touch each
 * other's staging, whether the areas live in the process (ranks met in process) or in {@code /dev/shm}
 * files (ranks met over TCP, as processes would).
 */
class HierarchyStagingIsolationTest {
    private static final int NODES = 2;
    private static final int PER_NODE = 2;
    /** The rank whose thread is creating its communicator (creation runs on the caller's thread). */
    private static final ThreadLocal<Integer> RANK = new ThreadLocal<>();

    /** One create or open of shared memory, by a rank. */
    record Use(int rank, boolean created, String name, String purpose) {
        int node() {
            return rank / PER_NODE;
        }
    }

    /** The host backend, noting who creates and maps which shared memory. */
    static final class Recording extends ForwardingBackend {
        final List<Use> uses = new CopyOnWriteArrayList<>();

        Recording(HostBackend host) {
            super(host);
        }

        private PinnedMemory note(PinnedMemory m, boolean created, String purpose) {
            Integer r = RANK.get();
            uses.add(new Use(r == null ? -1 : r, created, m.name(), purpose));
            return m;
        }

        @Override
        public PinnedMemory createShared(long bytes) {
            return note(delegate().createShared(bytes), true, null);
        }

        @Override
        public PinnedMemory createShared(long bytes, String purpose) {
            return note(delegate().createShared(bytes, purpose), true, purpose);
        }

        @Override
        public PinnedMemory createShared(long bytes, String purpose, boolean crossProcess) {
            return note(delegate().createShared(bytes, purpose, crossProcess), true, purpose);
        }

        @Override
        public PinnedMemory createShared(long bytes, String purpose, boolean crossProcess, MemoryPlacement placement) {
            return note(delegate().createShared(bytes, purpose, crossProcess, placement), true, purpose);
        }

        @Override
        public PinnedMemory openShared(String name, long bytes) {
            return note(delegate().openShared(name, bytes), false, null);
        }

        @Override
        public void close() {
            // the host backend is closed by its owner
        }
    }

    /** The ranks of both nodes, each rank's thread telling the recording backend its rank (pool threads end after). */
    private static Communicator[] make(Recording backend, FlexLinkConfig base, UniqueId id) throws Exception {
        return EmulatedNodes.make(backend, base, id, NODES, PER_NODE, false, RANK::set);
    }

    /** The assertions common to both ways of meeting; returns the PCIe staging names, node a's first. */
    private static List<String> checkIsolated(List<Use> uses) {
        assertTrue(uses.stream().allMatch(u -> u.rank() >= 0), "every shared area is made or mapped on a rank's own "
                + "creation thread: " + uses);
        List<String> pcie = new ArrayList<>();
        for (int node = 0; node < NODES; node++) {
            int j = node;
            List<Use> created = uses.stream().filter(u -> u.created() && u.node() == j).collect(Collectors.toList());
            List<String> staging = created.stream().filter(u -> "pcie".equals(u.purpose())).map(Use::name)
                    .collect(Collectors.toList());
            assertEquals(1, staging.size(), "node " + node + " has one PCIe staging area: " + created);
            assertTrue(created.stream().allMatch(u -> u.rank() == j * PER_NODE), "the node's first rank creates its "
                    + "areas: " + created);
            pcie.add(staging.get(0));
            Set<String> mine = created.stream().map(Use::name).collect(Collectors.toSet());
            for (int r = j * PER_NODE + 1; r < (j + 1) * PER_NODE; r++) {
                int rank = r;
                Set<String> opened = uses.stream().filter(u -> !u.created() && u.rank() == rank).map(Use::name)
                        .collect(Collectors.toSet());
                assertEquals(mine, opened, "rank " + rank + " maps exactly its node's areas, nothing of another node");
            }
        }
        assertNotEquals(pcie.get(0), pcie.get(1), "the two nodes' staging areas are distinct");
        Set<String> a = names(uses, 0);
        Set<String> b = names(uses, 1);
        Set<String> both = new HashSet<>(a);
        both.retainAll(b);
        assertTrue(both.isEmpty(), "no area is touched by both nodes: " + both);
        return pcie;
    }

    private static Set<String> names(List<Use> uses, int node) {
        return uses.stream().filter(u -> u.node() == node).map(Use::name).collect(Collectors.toSet());
    }

    /** Runs an AllReduce big enough to split, checks it, and that every rank's node path PCIe carried bytes. */
    private static void runAndCheckPcie(Recording backend, Communicator[] comms) {
        try (CollectiveHarness harness = new CollectiveHarness(backend, comms)) {
            CollectiveHarness.Outcome o = harness.run(Collective.ALL_REDUCE, DataType.FLOAT32, ReduceOp.SUM, 40_000, 0,
                    false, 29);
            assertEquals(0, o.wrong, o.toString());
        }
        for (int r = 0; r < comms.length; r++) {
            CommStats stats = comms[r].stats();
            long pcie = stats.paths().stream().filter(p -> p.path().equals("pcie")).mapToLong(p -> p.bytes()).sum();
            assertTrue(pcie > 0, "rank " + r + "'s node staging carried the node stage: " + stats);
        }
    }

    @Test
    void emulatedNodesInOneProcessMapOnlyTheirOwnNodesStaging() throws Exception {
        try (HostBackend host = new HostBackend(HierarchyThreadsTest.BASE)) {
            Recording backend = new Recording(host);
            Communicator[] comms = make(backend, HierarchyThreadsTest.BASE, FlexLink.getUniqueId());
            try {
                checkIsolated(backend.uses);
                runAndCheckPcie(backend, comms);
            } finally {
                HierarchyThreadsTest.closeAll(comms);
            }
        }
    }

    @Test
    void emulatedNodesMeetingOverTcpStageInDistinctShmFilesOfTheirOwn() throws Exception {
        FlexLinkConfig base = HierarchyThreadsTest.BASE;
        try (HostBackend host = new HostBackend(base)) {
            Recording backend = new Recording(host);
            Communicator[] comms = make(backend, base, FlexLink.getUniqueIdForProcesses(base));
            try {
                List<String> pcie = checkIsolated(backend.uses);
                String dir = ShmSegment.NAME_PREFIX + base.shmDir().resolve(ShmSegment.FILE_PREFIX);
                for (String name : pcie) {
                    assertTrue(name.startsWith(dir), "staging in a file of " + base.shmDir() + ": " + name);
                }
                runAndCheckPcie(backend, comms);
            } finally {
                HierarchyThreadsTest.closeAll(comms);
            }
        }
    }
}
