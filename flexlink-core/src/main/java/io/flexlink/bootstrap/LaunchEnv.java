package io.flexlink.bootstrap;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.UniqueId;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * What a launcher tells each process: its rank, the world size, its rank on its node, and the rendezvous
 * address. Four launchers' conventions are read, the first one present wins: torchrun's ({@code RANK},
 * {@code WORLD_SIZE}, {@code LOCAL_RANK}, {@code LOCAL_WORLD_SIZE}, {@code TORCHELASTIC_RUN_ID}), OpenMPI's
 * ({@code OMPI_COMM_WORLD_RANK}, {@code _SIZE}, {@code _LOCAL_RANK}, {@code _LOCAL_SIZE}), PMI's
 * ({@code PMI_RANK}, {@code PMI_SIZE}, with Hydra's {@code MPI_LOCALRANKID}) and Slurm's
 * ({@code SLURM_PROCID}, {@code SLURM_NTASKS}, {@code SLURM_LOCALID}). PMI comes before Slurm because an
 * MPI launcher running inside an allocation leaves Slurm's variables of its own helper processes behind.
 * Every launcher needs {@code MASTER_ADDR} and {@code MASTER_PORT}. Read from a map, so tests inject it.
 *
 * <p>No launcher hands out a shared secret, so the unique id is derived: its token (which names the
 * communicator) from the rendezvous address, the job id and how many communicators this process made from
 * the environment before; its secret from {@code flexlink.secret} when given, else from the same public
 * values. The world size is in neither: a rank of another world size must be told that the world sizes
 * differ, not that its secret is wrong. A derived secret keeps jobs apart; it does not keep out anyone who
 * can reach the port and knows the job (see docs/operations.md).
 */
public final class LaunchEnv {
    /** One launcher's variable names; a null name is a variable that launcher does not set. */
    private record Launcher(String name, String rank, String size, String localRank, String localSize,
                            List<String> jobIds) {
    }

    private static final List<Launcher> LAUNCHERS = List.of(
            new Launcher("torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE",
                    List.of("TORCHELASTIC_RUN_ID")),
            new Launcher("OpenMPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
                    "OMPI_COMM_WORLD_LOCAL_SIZE", List.of("PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid")),
            new Launcher("PMI", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS", List.of()),
            new Launcher("Slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", null,
                    List.of("SLURM_JOB_ID", "SLURM_STEP_ID")));

    /** This process's rank. */
    public final int rank;
    public final int worldSize;
    /** Rank on this node, or -1 when the launcher does not say (the rendezvous then learns it). */
    public final int localRank;
    /** Ranks on this node, or -1 when the launcher does not say. */
    public final int localWorldSize;
    public final String masterAddr;
    public final int masterPort;
    /** The launcher's id of this launch (TORCHELASTIC_RUN_ID, PMIX_NAMESPACE, SLURM_JOB_ID.SLURM_STEP_ID), or empty. */
    public final String runId;
    /** Whose variables these are: {@code torchrun}, {@code OpenMPI}, {@code PMI} or {@code Slurm}. */
    public final String launcher;

    private LaunchEnv(int rank, int worldSize, int localRank, int localWorldSize, String masterAddr, int masterPort,
                      String runId, String launcher) {
        this.rank = rank;
        this.worldSize = worldSize;
        this.localRank = localRank;
        this.localWorldSize = localWorldSize;
        this.masterAddr = masterAddr;
        this.masterPort = masterPort;
        this.runId = runId;
        this.launcher = launcher;
    }

    /**
     * Reads the first launcher's variables that are present (torchrun, OpenMPI, PMI, Slurm); the rank,
     * the world size, MASTER_ADDR and MASTER_PORT are required, the local rank and size optional.
     * Fails with INVALID_ARGUMENT naming the variable.
     */
    public static LaunchEnv parse(Map<String, String> env) {
        Launcher l = LAUNCHERS.get(0);
        for (Launcher candidate : LAUNCHERS) {
            if (present(env, candidate.rank)) {
                l = candidate;
                break;
            }
        }
        int world = integer(env, l.size, null, l);
        if (world < 1) {
            throw bad(l.size, env.get(l.size), "must be at least 1", l);
        }
        int rank = integer(env, l.rank, null, l);
        if (rank < 0 || rank >= world) {
            throw bad(l.rank, env.get(l.rank), "must be in [0, " + l.size + "=" + world + ")", l);
        }
        int localWorld = l.localSize == null ? -1 : integer(env, l.localSize, -1, l);
        if (localWorld != -1 && (localWorld < 1 || localWorld > world)) {
            throw bad(l.localSize, env.get(l.localSize), "must be in [1, " + l.size + "=" + world + "]", l);
        }
        int localRank = integer(env, l.localRank, -1, l);
        if (localRank < -1 || localRank != -1 && localRank >= (localWorld > 0 ? localWorld : world)) {
            throw bad(l.localRank, env.get(l.localRank), "must be in [0, " + (localWorld > 0
                    ? l.localSize + "=" + localWorld : l.size + "=" + world) + ")", l);
        }
        String addr = env.get("MASTER_ADDR");
        if (addr == null || addr.isBlank()) {
            throw bad("MASTER_ADDR", addr, "is required (rank 0's address)", l);
        }
        int port = integer(env, "MASTER_PORT", null, l);
        if (port < 1 || port > 65535) {
            throw bad("MASTER_PORT", env.get("MASTER_PORT"), "must be in [1, 65535]", l);
        }
        StringBuilder job = new StringBuilder();
        for (String v : l.jobIds) {
            if (present(env, v)) {
                job.append(job.length() == 0 ? "" : ".").append(env.get(v).trim());
            }
        }
        return new LaunchEnv(rank, world, localRank, localWorld, addr.trim(), port, job.toString(), l.name);
    }

    private static boolean present(Map<String, String> env, String name) {
        return name != null && env.get(name) != null && !env.get(name).isBlank();
    }

    private static int integer(Map<String, String> env, String name, Integer def, Launcher l) {
        String v = env.get(name);
        if (v == null || v.isBlank()) {
            if (def == null) {
                throw bad(name, v, "is required", l);
            }
            return def;
        }
        try {
            return Integer.parseInt(v.trim());
        } catch (NumberFormatException e) {
            throw bad(name, v, "is not an integer", l);
        }
    }

    private static FlexLinkException bad(String name, String value, String why, Launcher l) {
        return new FlexLinkException(Result.INVALID_ARGUMENT, name + (value == null ? "" : "='" + value + "'")
                + ": " + why + " (" + l.name + "-style launch; also read: RANK/WORLD_SIZE of torchrun, "
                + "OMPI_COMM_WORLD_RANK/_SIZE of OpenMPI, PMI_RANK/PMI_SIZE, SLURM_PROCID/SLURM_NTASKS)");
    }

    /**
     * The device of this rank: the local rank ({@code localIndex} when the launcher gave none), wrapped
     * when the process sees fewer devices (CUDA_VISIBLE_DEVICES).
     */
    public int device(int deviceCount, int localIndex) {
        return (localRank >= 0 ? localRank : localIndex) % deviceCount;
    }

    /** {@link #device(int, int)} for a launch that gave the local rank (or a single node). */
    public int device(int deviceCount) {
        return device(deviceCount, rank);
    }

    /**
     * The id every process of the job derives alike for its {@code generation}-th communicator from the
     * environment: rank 0's {@code address} and MASTER_PORT, a token from the public values, and the
     * secret from {@code secret} (empty: from the public values too).
     */
    public UniqueId uniqueId(byte[] address, byte[] secret, String jobId, int generation) {
        String job = jobId == null || jobId.isEmpty() ? runId : jobId;
        String pub = masterAddr + ":" + masterPort + "|" + job;
        byte[] token = Arrays.copyOf(sha256("flexlink-token|" + pub + "|" + generation, null), 8);
        byte[] sec = Arrays.copyOf(secret == null || secret.length == 0 ? sha256("flexlink-job|" + pub, null)
                : sha256("flexlink-secret|", secret), 16);
        return UniqueId.of(address, masterPort, token, sec);
    }

    private static byte[] sha256(String text, byte[] more) {
        try {
            MessageDigest d = MessageDigest.getInstance("SHA-256");
            d.update(text.getBytes(StandardCharsets.UTF_8));
            if (more != null) {
                d.update(more);
            }
            return d.digest();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public String toString() {
        return launcher + " rank " + rank + "/" + worldSize + (localRank < 0 ? "" : " (local " + localRank
                + (localWorldSize < 0 ? "" : "/" + localWorldSize) + ")") + ", rendezvous " + masterAddr + ":"
                + masterPort;
    }
}
