package io.flexlink.runtime;

import java.util.Arrays;

/**
 * One rank's point-to-point transfers of one group, in call order: sends ({@code bytes} from
 * {@code address} to {@code peer}) and receives ({@code bytes} from {@code peer} into {@code address}).
 * The transfers between two ranks pair up in order, as NCCL pairs a group's sends and receives. A
 * reusable value: {@link #clear} keeps the arrays.
 */
public final class PeerOps {
    private boolean[] sends = new boolean[8];
    private int[] peers = new int[8];
    private long[] addresses = new long[8];
    private long[] bytes = new long[8];
    private int size;

    public PeerOps add(boolean send, int peer, long address, long byteCount) {
        if (size == peers.length) {
            int n = size * 2;
            sends = Arrays.copyOf(sends, n);
            peers = Arrays.copyOf(peers, n);
            addresses = Arrays.copyOf(addresses, n);
            bytes = Arrays.copyOf(bytes, n);
        }
        sends[size] = send;
        peers[size] = peer;
        addresses[size] = address;
        bytes[size] = byteCount;
        size++;
        return this;
    }

    public void clear() {
        size = 0;
    }

    public int size() {
        return size;
    }

    public boolean isEmpty() {
        return size == 0;
    }

    public boolean isSend(int i) {
        return sends[i];
    }

    public int peer(int i) {
        return peers[i];
    }

    public long address(int i) {
        return addresses[i];
    }

    public long bytes(int i) {
        return bytes[i];
    }
}
