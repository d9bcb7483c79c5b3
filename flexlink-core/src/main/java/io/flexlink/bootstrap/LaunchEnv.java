package io.flexlink.bootstrap;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.UniqueId;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.Map;

/**
 * What a launcher tells each process, in torchrun's conventions: {@code RANK}, {@code WORLD_SIZE},
 * {@code LOCAL_RANK}, {@code LOCAL_WORLD_SIZE}, {@code MASTER_ADDR}, {@code MASTER_PORT} (and
 * {@code TORCHELASTIC_RUN_ID} where torchrun sets it). Read from a map, so tests inject it.
 *
 * <p>torchrun hands out no shared secret, so the unique id is derived: its token (which names the
 * communicator) from the rendezvous address, the world size, the job id and how many communicators this
 * process made from the environment before; its secret from {@code flexlink.secret} when given, else
 * from the same public values. A derived secret keeps jobs apart; it does not keep out anyone who can
 * reach the port and knows the job (see docs/operations.md).
 */
public final class LaunchEnv {
    /** This process's rank. */
    public final int rank;
    public final int worldSize;
    /** Rank on this node; the device is {@code LOCAL_RANK % deviceCount}. */
    public final int localRank;
    public final int localWorldSize;
    public final String masterAddr;
    public final int masterPort;
    /** {@code TORCHELASTIC_RUN_ID}, or empty. */
    public final String runId;

    private LaunchEnv(int rank, int worldSize, int localRank, int localWorldSize, String masterAddr, int masterPort,
                      String runId) {
        this.rank = rank;
        this.worldSize = worldSize;
        this.localRank = localRank;
        this.localWorldSize = localWorldSize;
        this.masterAddr = masterAddr;
        this.masterPort = masterPort;
        this.runId = runId;
    }

    /**
     * Reads the variables; RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT are required, LOCAL_RANK
     * defaults to RANK and LOCAL_WORLD_SIZE to WORLD_SIZE. Fails with INVALID_ARGUMENT naming the variable.
     */
    public static LaunchEnv parse(Map<String, String> env) {
        int world = integer(env, "WORLD_SIZE", null);
        if (world < 1) {
            throw bad("WORLD_SIZE", env.get("WORLD_SIZE"), "must be at least 1");
        }
        int rank = integer(env, "RANK", null);
        if (rank < 0 || rank >= world) {
            throw bad("RANK", env.get("RANK"), "must be in [0, WORLD_SIZE=" + world + ")");
        }
        int localWorld = integer(env, "LOCAL_WORLD_SIZE", world);
        int localRank = integer(env, "LOCAL_RANK", rank);
        if (localWorld != world) {
            throw new FlexLinkException(Result.INVALID_USAGE, "LOCAL_WORLD_SIZE=" + localWorld + " but WORLD_SIZE="
                    + world + ": the ranks span several nodes, and a FlexLink communicator is single-node (its "
                    + "ranks share pinned memory); make one communicator per node");
        }
        if (localRank < 0 || localRank >= localWorld) {
            throw bad("LOCAL_RANK", env.get("LOCAL_RANK"), "must be in [0, LOCAL_WORLD_SIZE=" + localWorld + ")");
        }
        String addr = env.get("MASTER_ADDR");
        if (addr == null || addr.isBlank()) {
            throw bad("MASTER_ADDR", addr, "is required (rank 0's address)");
        }
        int port = integer(env, "MASTER_PORT", null);
        if (port < 1 || port > 65535) {
            throw bad("MASTER_PORT", env.get("MASTER_PORT"), "must be in [1, 65535]");
        }
        String runId = env.getOrDefault("TORCHELASTIC_RUN_ID", "").trim();
        return new LaunchEnv(rank, world, localRank, localWorld, addr.trim(), port, runId);
    }

    private static int integer(Map<String, String> env, String name, Integer def) {
        String v = env.get(name);
        if (v == null || v.isBlank()) {
            if (def == null) {
                throw bad(name, v, "is required");
            }
            return def;
        }
        try {
            return Integer.parseInt(v.trim());
        } catch (NumberFormatException e) {
            throw bad(name, v, "is not an integer");
        }
    }

    private static FlexLinkException bad(String name, String value, String why) {
        return new FlexLinkException(Result.INVALID_ARGUMENT,
                name + (value == null ? "" : "='" + value + "'") + ": " + why + " (torchrun-style launch)");
    }

    /** The device of this rank: LOCAL_RANK, wrapped when the process sees fewer devices (CUDA_VISIBLE_DEVICES). */
    public int device(int deviceCount) {
        return localRank % deviceCount;
    }

    /**
     * The id every process of the job derives alike for its {@code generation}-th communicator from the
     * environment: rank 0's {@code address} and MASTER_PORT, a token from the public values, and the
     * secret from {@code secret} (empty: from the public values too).
     */
    public UniqueId uniqueId(byte[] address, byte[] secret, String jobId, int generation) {
        String job = jobId == null || jobId.isEmpty() ? runId : jobId;
        String pub = masterAddr + ":" + masterPort + "|" + worldSize + "|" + job;
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
        return "rank " + rank + "/" + worldSize + " (local " + localRank + "/" + localWorldSize + "), rendezvous "
                + masterAddr + ":" + masterPort;
    }
}
