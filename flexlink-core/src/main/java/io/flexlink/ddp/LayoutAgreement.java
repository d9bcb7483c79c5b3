package io.flexlink.ddp;

import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;

/**
 * Makes the ranks agree on their buckets before a bucket is launched: an AllGather of a fixed-size record
 * through the communicator itself, then the same comparison on every rank. Every rank therefore reaches
 * the same verdict from the same numbers and, where one rank differs, every rank throws the same error at
 * the same point instead of launching collectives that do not match (which would hang or mix gradients).
 * The record has a fixed size whatever the rank registered, so that the AllGather itself always matches.
 *
 * <p>Runs twice at most: when the buckets are built, and when they are rebuilt after the first step. Each
 * time the host waits for the AllGather (the only host waits of the buckets).
 */
final class LayoutAgreement implements AutoCloseable {
    /** Layout hash, parameter count, gradient bytes, options hash. */
    private static final int LAYOUT_LONGS = 4;

    private final Communicator comm;
    private final Backend backend;
    private final RuntimeStream stream;
    private final int paramCount;
    private final DeviceMemory send;
    private final DeviceMemory recv;
    private final ByteBuffer host;

    LayoutAgreement(Communicator comm, Backend backend, RuntimeStream stream, int paramCount) {
        this.comm = comm;
        this.backend = backend;
        this.stream = stream;
        this.paramCount = paramCount;
        long bytes = Math.max(LAYOUT_LONGS * 8L, paramCount * 4L);
        this.send = backend.allocate(comm.device(), bytes);
        DeviceMemory r = null;
        try {
            r = backend.allocate(comm.device(), bytes * comm.size());
        } finally {
            if (r == null) {
                send.close();
            }
        }
        this.recv = r;
        this.host = ByteBuffer.allocateDirect((int) (bytes * comm.size())).order(ByteOrder.nativeOrder());
    }

    /**
     * Checks that every rank built the same buckets with the same options.
     *
     * @throws FlexLinkException INVALID_USAGE on every rank when any rank differs from rank 0
     */
    void agreeOnLayout(long layoutHash, long params, long bytes, long optionsHash) {
        host.clear();
        host.putLong(layoutHash).putLong(params).putLong(bytes).putLong(optionsHash).flip();
        ByteBuffer all = gather(LAYOUT_LONGS, DataType.INT64, 8);
        StringBuilder differ = new StringBuilder();
        for (int r = 1; r < comm.size(); r++) {
            int at = r * LAYOUT_LONGS * 8;
            if (all.getLong(at + 24) != all.getLong(24)) {
                differ.append("; rank ").append(r).append(" was built with other options (reduction, scale, bucket ")
                        .append("caps, findUnusedParameters, rebuild or cast) than rank 0");
            } else if (all.getLong(at) != all.getLong(0) || all.getLong(at + 8) != all.getLong(8)
                    || all.getLong(at + 16) != all.getLong(16)) {
                differ.append("; rank ").append(r).append(" registered ").append(all.getLong(at + 8))
                        .append(" parameters of ").append(all.getLong(at + 16)).append(" bytes (layout 0x")
                        .append(Long.toHexString(all.getLong(at))).append(") where rank 0 registered ")
                        .append(all.getLong(8)).append(" of ").append(all.getLong(16)).append(" bytes (layout 0x")
                        .append(Long.toHexString(all.getLong(0))).append(')');
            }
        }
        if (differ.length() > 0) {
            throw new FlexLinkException(Result.INVALID_USAGE, "gradient buckets: the ranks' buckets would not match"
                    + differ + ". Every rank must register the same gradients (count and type) in the same order, "
                    + "with the same options; nothing was launched");
        }
    }

    /**
     * Checks that every rank saw its gradients become ready in the same order before buckets are rebuilt from
     * that order, and returns the order to rebuild from: rank 0's, the same on every rank. {@code order} lists
     * every parameter index once, those marked ready first, in the order they were, then those the rank did
     * not use as {@code -1 - index}. Only gradients that every rank produced are compared: with unused
     * parameters, ranks may differ in which ones they skipped (DDP's {@code find_unused_parameters}).
     *
     * @throws FlexLinkException INVALID_USAGE on every rank when the ranks' orders differ
     */
    int[] agreeOnOrder(int[] order, List<Parameter> params) {
        host.clear();
        for (int p : order) {
            host.putInt(p);
        }
        host.flip();
        ByteBuffer all = gather(paramCount, DataType.INT32, 4);
        boolean[] everywhere = new boolean[paramCount];
        java.util.Arrays.fill(everywhere, true);
        for (int i = 0; i < paramCount * comm.size(); i++) {
            int v = all.getInt(i * 4);
            if (v < 0) {
                everywhere[-1 - v] = false;
            }
        }
        StringBuilder differ = new StringBuilder();
        for (int r = 1; r < comm.size(); r++) {
            int a = 0;
            int b = 0;
            for (int k = 1; ; k++) {
                a = nextCommon(all, 0, a, everywhere);
                b = nextCommon(all, r, b, everywhere);
                if (a == paramCount || b == paramCount) {
                    break;
                }
                int first = all.getInt(a * 4);
                int mine = all.getInt((r * paramCount + b) * 4);
                if (mine != first) {
                    differ.append("; rank ").append(r).append(" had ").append(name(params, mine)).append(" ready ")
                            .append(ordinal(k)).append(" where rank 0 had ").append(name(params, first));
                    break;
                }
                a++;
                b++;
            }
        }
        if (differ.length() > 0) {
            throw new FlexLinkException(Result.INVALID_USAGE, "gradient buckets: the ranks marked their gradients "
                    + "ready in different orders in the first step, so buckets rebuilt from that order would not match"
                    + differ + ". Every rank must produce its gradients in the same order, or build the buckets "
                    + "with rebuildFromReadyOrder(false); the buckets were not rebuilt and are now unusable");
        }
        int[] canonical = new int[paramCount];
        for (int i = 0; i < paramCount; i++) {
            int v = all.getInt(i * 4);
            canonical[i] = v < 0 ? -1 - v : v;
        }
        return canonical;
    }

    /** The position, from {@code from}, of rank {@code r}'s next ready gradient that every rank produced. */
    private int nextCommon(ByteBuffer all, int r, int from, boolean[] everywhere) {
        int i = from;
        while (i < paramCount) {
            int v = all.getInt((r * paramCount + i) * 4);
            if (v >= 0 && everywhere[v]) {
                break;
            }
            i++;
        }
        return i;
    }

    /** AllGathers the first {@code count} elements of {@link #host} from every rank, waiting for the result. */
    private ByteBuffer gather(int count, DataType type, int size) {
        backend.upload(send.address(), host);
        comm.allGather(send.address(), recv.address(), count, type, stream);
        stream.synchronize();
        host.clear().limit(count * size * comm.size());
        backend.download(host, recv.address());
        return host.duplicate().order(ByteOrder.nativeOrder());
    }

    private static String name(List<Parameter> params, int index) {
        return index >= 0 && index < params.size() ? params.get(index).toString() : "parameter #" + index;
    }

    private static String ordinal(int n) {
        int mod100 = n % 100;
        String suffix = mod100 >= 11 && mod100 <= 13 ? "th"
                : n % 10 == 1 ? "st" : n % 10 == 2 ? "nd" : n % 10 == 3 ? "rd" : "th";
        return n + suffix;
    }

    @Override
    public void close() {
        send.close();
        recv.close();
    }
}
