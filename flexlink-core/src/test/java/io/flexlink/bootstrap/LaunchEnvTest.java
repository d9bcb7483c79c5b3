package io.flexlink.bootstrap;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.UniqueId;
import io.flexlink.config.FlexLinkConfig;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** torchrun's variables, read from an injected environment, and the id every process derives from them. */
class LaunchEnvTest {
    private static final byte[] LOOPBACK = {127, 0, 0, 1};

    private static Map<String, String> env(String... kv) {
        Map<String, String> m = new HashMap<>(Map.of("RANK", "2", "WORLD_SIZE", "4", "MASTER_ADDR", "127.0.0.1",
                "MASTER_PORT", "29517"));
        for (int i = 0; i < kv.length; i += 2) {
            if (kv[i + 1] == null) {
                m.remove(kv[i]);
            } else {
                m.put(kv[i], kv[i + 1]);
            }
        }
        return m;
    }

    @Test
    void readsTorchrunsVariables() {
        LaunchEnv e = LaunchEnv.parse(env("LOCAL_RANK", "2", "LOCAL_WORLD_SIZE", "4", "TORCHELASTIC_RUN_ID", "job7"));
        assertEquals(2, e.rank);
        assertEquals(4, e.worldSize);
        assertEquals(2, e.localRank);
        assertEquals(4, e.localWorldSize);
        assertEquals("127.0.0.1", e.masterAddr);
        assertEquals(29517, e.masterPort);
        assertEquals("job7", e.runId);
        assertEquals(2, e.device(8));
        assertEquals(0, e.device(1), "one visible device per process (CUDA_VISIBLE_DEVICES): device 0");
    }

    @Test
    void withoutALocalRankTheNodeDecidesTheDevice() {
        LaunchEnv e = LaunchEnv.parse(env());
        assertEquals(-1, e.localRank, "the launcher said nothing");
        assertEquals(-1, e.localWorldSize);
        assertEquals(1, e.device(8, 1), "the rank's index on its node, learned at the rendezvous");
        assertEquals(2, e.device(8), "a single node: the rank");
    }

    @Test
    void severalNodesAreALocalWorldBelowTheWorld() {
        LaunchEnv e = LaunchEnv.parse(env("LOCAL_WORLD_SIZE", "2", "LOCAL_RANK", "0"));
        assertEquals(2, e.localWorldSize);
        assertEquals(0, e.localRank);
        assertEquals(0, e.device(8, 1), "LOCAL_RANK picks the device when given");
        assertEquals("torchrun", e.launcher);
    }

    @Test
    void readsOpenMpiSlurmAndPmi() {
        Map<String, String> ompi = Map.of("OMPI_COMM_WORLD_RANK", "5", "OMPI_COMM_WORLD_SIZE", "8",
                "OMPI_COMM_WORLD_LOCAL_RANK", "1", "OMPI_COMM_WORLD_LOCAL_SIZE", "4", "PMIX_NAMESPACE", "prterun-x-1",
                "MASTER_ADDR", "10.0.0.1", "MASTER_PORT", "29500");
        LaunchEnv o = LaunchEnv.parse(ompi);
        assertEquals(List.of(5, 8, 1, 4), List.of(o.rank, o.worldSize, o.localRank, o.localWorldSize));
        assertEquals("OpenMPI", o.launcher);
        assertEquals("prterun-x-1", o.runId, "the launch's id keeps two launches apart");
        Map<String, String> slurm = Map.of("SLURM_PROCID", "3", "SLURM_NTASKS", "4", "SLURM_LOCALID", "1",
                "SLURM_JOB_ID", "991", "SLURM_STEP_ID", "0", "MASTER_ADDR", "node1", "MASTER_PORT", "29500");
        LaunchEnv s = LaunchEnv.parse(slurm);
        assertEquals(List.of(3, 4, 1, -1), List.of(s.rank, s.worldSize, s.localRank, s.localWorldSize));
        assertEquals("Slurm", s.launcher);
        assertEquals("991.0", s.runId);
        Map<String, String> pmi = new HashMap<>(Map.of("PMI_RANK", "2", "PMI_SIZE", "6", "MASTER_ADDR", "h",
                "MASTER_PORT", "29500"));
        pmi.putAll(Map.of("SLURM_PROCID", "0", "SLURM_NTASKS", "2")); // an MPI launcher's helper inside an allocation
        LaunchEnv p = LaunchEnv.parse(pmi);
        assertEquals(List.of(2, 6, -1), List.of(p.rank, p.worldSize, p.localRank), "PMI's rank, not the helper's");
        assertEquals("PMI", p.launcher);
        Map<String, String> both = new HashMap<>(env("RANK", "1"));
        both.putAll(Map.of("SLURM_PROCID", "0", "SLURM_NTASKS", "2"));
        assertEquals(1, LaunchEnv.parse(both).rank, "torchrun under srun: torchrun's variables win");
        FlexLinkException noSize = assertThrows(FlexLinkException.class, () -> LaunchEnv.parse(Map.of(
                "SLURM_PROCID", "0", "MASTER_ADDR", "h", "MASTER_PORT", "1")));
        assertTrue(noSize.getMessage().contains("SLURM_NTASKS") && noSize.getMessage().contains("Slurm"),
                noSize.getMessage());
        FlexLinkException none = assertThrows(FlexLinkException.class, () -> LaunchEnv.parse(Map.of()));
        assertTrue(none.getMessage().contains("WORLD_SIZE") && none.getMessage().contains("OMPI_COMM_WORLD_RANK"),
                none.getMessage());
    }

    @Test
    void mistakesNameTheVariable() {
        for (String[] bad : new String[][] {
                {"RANK", null}, {"RANK", "4"}, {"RANK", "x"}, {"WORLD_SIZE", "0"}, {"MASTER_ADDR", null},
                {"MASTER_PORT", "0"}, {"MASTER_PORT", "70000"}, {"LOCAL_RANK", "5"}}) {
            FlexLinkException ex = assertThrows(FlexLinkException.class, () -> LaunchEnv.parse(env(bad)),
                    Arrays.toString(bad));
            assertEquals(Result.INVALID_ARGUMENT, ex.result());
            assertTrue(ex.getMessage().contains(bad[0]), ex.getMessage());
        }
        for (String[] bad : new String[][] {{"LOCAL_WORLD_SIZE", "5"}, {"LOCAL_WORLD_SIZE", "0"}}) {
            FlexLinkException ex = assertThrows(FlexLinkException.class, () -> LaunchEnv.parse(env(bad)));
            assertTrue(ex.getMessage().contains("LOCAL_WORLD_SIZE"), ex.getMessage());
        }
        FlexLinkException local = assertThrows(FlexLinkException.class,
                () -> LaunchEnv.parse(env("LOCAL_WORLD_SIZE", "2", "LOCAL_RANK", "2")));
        assertTrue(local.getMessage().contains("LOCAL_RANK") && local.getMessage().contains("LOCAL_WORLD_SIZE=2"),
                local.getMessage());
    }

    @Test
    void everyRankDerivesTheSameIdAndJobsDiffer() {
        UniqueId a = LaunchEnv.parse(env("RANK", "0")).uniqueId(LOOPBACK, new byte[0], "", 0);
        UniqueId b = LaunchEnv.parse(env("RANK", "3")).uniqueId(LOOPBACK, new byte[0], "", 0);
        assertEquals(a, b);
        assertArrayEquals(LOOPBACK, a.address());
        assertEquals(29517, a.port());
        UniqueId next = LaunchEnv.parse(env()).uniqueId(LOOPBACK, new byte[0], "", 1);
        assertNotEquals(a.token(), next.token(), "the second communicator has its own token");
        assertArrayEquals(a.secret(), next.secret(), "and the job's secret");
        UniqueId otherJob = LaunchEnv.parse(env()).uniqueId(LOOPBACK, new byte[0], "job-b", 0);
        assertNotEquals(a.token(), otherJob.token());
        assertFalse(Arrays.equals(a.secret(), otherJob.secret()));
        UniqueId runId = LaunchEnv.parse(env("TORCHELASTIC_RUN_ID", "job-b")).uniqueId(LOOPBACK, new byte[0], "", 0);
        assertEquals(otherJob, runId, "TORCHELASTIC_RUN_ID is the job id when flexlink.jobId is unset");
        UniqueId otherWorld = LaunchEnv.parse(env("WORLD_SIZE", "8")).uniqueId(LOOPBACK, new byte[0], "", 0);
        assertEquals(a, otherWorld, "the world size is checked at the rendezvous, not hidden in the secret: a rank "
                + "of another world size must hear that the sizes differ");
    }

    @Test
    void aGivenSecretReplacesTheDerivedOne() {
        FlexLinkConfig hex = FlexLinkConfig.builder()
                .environment(Map.of("FLEXLINK_SECRET", "00112233445566778899aabbccddeeff")).build();
        FlexLinkConfig b64 = FlexLinkConfig.builder()
                .environment(Map.of("FLEXLINK_SECRET", "ABEiM0RVZneImaq7zN3u/w==")).build();
        assertArrayEquals(hex.secret(), b64.secret(), "hex and Base64 of the same bytes");
        LaunchEnv e = LaunchEnv.parse(env());
        UniqueId derived = e.uniqueId(LOOPBACK, new byte[0], "", 0);
        UniqueId given = e.uniqueId(LOOPBACK, hex.secret(), "", 0);
        assertEquals(derived.token(), given.token());
        assertFalse(Arrays.equals(derived.secret(), given.secret()));
        FlexLinkException shortOne = assertThrows(FlexLinkException.class, () ->
                FlexLinkConfig.builder().environment(Map.of("FLEXLINK_SECRET", "abcd")).build().secret());
        assertTrue(shortOne.getMessage().contains("too short"), shortOne.getMessage());
        FlexLinkException garbage = assertThrows(FlexLinkException.class, () ->
                FlexLinkConfig.builder().environment(Map.of("FLEXLINK_SECRET", "not a secret!!")).build().secret());
        assertFalse(garbage.getMessage().contains("not a secret"), "the value is never echoed");
    }
}
