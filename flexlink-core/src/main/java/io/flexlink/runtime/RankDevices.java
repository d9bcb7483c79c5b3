package io.flexlink.runtime;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;

/**
 * Which device each rank of a communicator of one node runs on: the ordinal its own process gives it, and the
 * {@link Backend#deviceKey key} that names it alike in every process. Two ranks share a device when their keys
 * are equal, not their ordinals: processes started with {@code CUDA_VISIBLE_DEVICES} set to one GPU each all
 * call theirs device 0 (NCCL, likewise, tells GPUs apart by bus id).
 */
public final class RankDevices {
    private final int[] ordinals;
    private final String[] keys;

    private RankDevices(int[] ordinals, String[] keys) {
        this.ordinals = ordinals;
        this.keys = keys;
    }

    /** The ranks of one process, rank {@code r} on {@code ordinals[r]}. */
    public static RankDevices of(Backend backend, int[] ordinals) {
        String[] keys = new String[ordinals.length];
        for (int r = 0; r < ordinals.length; r++) {
            keys[r] = backend.deviceKey(ordinals[r]);
        }
        return new RankDevices(ordinals.clone(), keys);
    }

    /** Every rank's device, learnt in one round of {@code exchange}, on which every rank calls this together. */
    public static RankDevices exchange(RankExchange exchange, Backend backend, int device) {
        byte[] key = backend.deviceKey(device).getBytes(StandardCharsets.UTF_8);
        byte[][] all = exchange.allGather(ByteBuffer.allocate(4 + key.length).putInt(device).put(key).array());
        int[] ordinals = new int[all.length];
        String[] keys = new String[all.length];
        for (int r = 0; r < all.length; r++) {
            ByteBuffer b = ByteBuffer.wrap(all[r]);
            ordinals[r] = b.getInt();
            keys[r] = new String(all[r], 4, all[r].length - 4, StandardCharsets.UTF_8);
        }
        return new RankDevices(ordinals, keys);
    }

    public int size() {
        return ordinals.length;
    }

    /** Rank {@code r}'s device as its own process numbers it. */
    public int ordinal(int r) {
        return ordinals[r];
    }

    /** Rank {@code r}'s device as every process names it. */
    public String key(int r) {
        return keys[r];
    }

    /** How many ranks run on rank {@code r}'s device, {@code r} included. */
    public int sharing(int r) {
        int n = 0;
        for (String k : keys) {
            n += k.equals(keys[r]) ? 1 : 0;
        }
        return n;
    }

    /** True when two ranks run on one device. */
    public boolean anyShared() {
        Set<String> distinct = new HashSet<>(Arrays.asList(keys));
        return distinct.size() < keys.length;
    }

    @Override
    public String toString() {
        return "RankDevices" + Arrays.toString(keys);
    }
}
