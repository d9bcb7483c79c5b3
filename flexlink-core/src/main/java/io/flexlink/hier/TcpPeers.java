package io.flexlink.hier;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.LinkPacing;
import io.flexlink.runtime.PeerOps;
import io.flexlink.runtime.PrimaryTransport;
import io.flexlink.runtime.RankExchange;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.Emulation;
import java.io.DataInputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Arrays;

/**
 * Send and Recv between nodes on the host backend: a {@link NetChannel} per peer, its outgoing connection
 * dialled by this rank and its incoming one dialled by the peer, both made when the pair first transfers.
 * At creation every rank only opens a listener and learns every rank's address (one round of the job's
 * exchange), so a transfer involves its two ranks alone: a rank's first call to a peer starts its dial on
 * the channel's sender thread (the call never waits for the network) and the peer's listener thread takes
 * the connection whether or not the peer has made its own call yet. Connections are unidirectional, as the
 * rail's, so that closing one end never resets data still travelling the other way.
 *
 * <p>A group's transfers run on one stream in rounds: round {@code k} sends the {@code k}-th chunk of what
 * goes to each peer (its transfers to that peer concatenated, in call order, chunks cut per transfer), then
 * receives the {@code k}-th chunk from each. A round's sends wait only for the peers' receipts of earlier
 * rounds (the slots), and its receipts for the peers' sends of the same round, so any pattern of peers and
 * sizes completes, as NCCL's grouped send/recv does.
 */
final class TcpPeers implements PeerNet {
    private static final int MAGIC = 0x464C5850; // "FLXP"
    private static final int HELLO = 4 + 16 + 4 + 4;
    private static final SecureRandom RANDOM = new SecureRandom();

    private final Backend backend;
    private final int rank;
    private final int n;
    private final int slots;
    private final int chunk;
    private final FlexLinkConfig config;
    private final Duration timeout;
    private final byte[] secret;
    private final InetSocketAddress[] where;
    private final ServerSocketChannel listener;
    private final Thread acceptor;
    private final Runnable onFailure;
    /** By peer rank, made at the pair's first transfer (by a call here or the peer's connection). */
    private final NetChannel[] channels;
    private final boolean[] accepted;
    private volatile boolean stopped;
    private volatile String failure;
    /** Reused by {@link #exchange}: bytes done per transfer, and which transfers move a chunk this round. */
    private long[] done = new long[8];
    private boolean[] turn = new boolean[8];

    private TcpPeers(Backend backend, FlexLinkConfig config, int rank, int n, byte[] secret, InetSocketAddress[] where,
                     ServerSocketChannel listener, Runnable onFailure) {
        this.backend = backend;
        this.config = config;
        this.rank = rank;
        this.n = n;
        this.slots = config.slots();
        this.chunk = (int) Math.max(4096, Math.min(Rails.MAX_CHUNK, config.chunkBytes()) / 256 * 256);
        this.timeout = config.initTimeout();
        this.secret = secret;
        this.where = where;
        this.listener = listener;
        this.onFailure = onFailure;
        this.channels = new NetChannel[n];
        this.accepted = new boolean[n];
        this.acceptor = new Thread(this::acceptLoop, "flexlink-peers-r" + rank + "-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** Every rank of the job calls this together: a listener each, one round of addresses and rank 0's secret. */
    static TcpPeers create(Backend backend, FlexLinkConfig config, RankExchange exchange, int rank, int n,
                           InetAddress address, Runnable onFailure) {
        ServerSocketChannel listener = null;
        try {
            listener = ServerSocketChannel.open();
            listener.bind(new InetSocketAddress(address, 0), 64);
            byte[] mine = new byte[16];
            if (rank == 0) {
                RANDOM.nextBytes(mine);
            }
            byte[] a = address.getAddress();
            ByteBuffer b = ByteBuffer.allocate(4 + 16 + a.length).putInt(listener.socket().getLocalPort()).put(mine)
                    .put(a);
            byte[][] all = exchange.allGather(b.array());
            InetSocketAddress[] where = new InetSocketAddress[n];
            byte[] secret = Arrays.copyOfRange(all[0], 4, 20);
            for (int r = 0; r < n; r++) {
                ByteBuffer w = ByteBuffer.wrap(all[r]);
                int port = w.getInt();
                w.position(20);
                byte[] addr = new byte[all[r].length - 20];
                w.get(addr);
                where[r] = new InetSocketAddress(InetAddress.getByAddress(addr), port);
            }
            return new TcpPeers(backend, config, rank, n, secret, where, listener, onFailure);
        } catch (IOException e) {
            RailConnector.close(listener);
            throw new FlexLinkException(Result.SYSTEM_ERROR, "rank " + rank + "/" + n + ": cannot listen for "
                    + "transfers from other nodes: " + e.getMessage(), e);
        } catch (RuntimeException | Error e) {
            RailConnector.close(listener);
            throw e;
        }
    }

    @Override
    public void exchange(PeerOps ops, RuntimeStream stream) {
        int m = ops.size();
        if (done.length < m) {
            done = new long[m];
            turn = new boolean[m];
        }
        Arrays.fill(done, 0, m, 0);
        for (int i = 0; i < m; i++) {
            if (ops.peer(i) != rank) {
                channel(ops.peer(i)); // every pair's connections start now, before any stream waits on one
            }
        }
        copyToItself(ops, m, stream);
        boolean more = true;
        while (more) {
            more = false;
            for (int pass = 0; pass < 2; pass++) { // the round's sends, then its receipts
                boolean sends = pass == 0;
                markTurns(ops, m, sends);
                for (int i = 0; i < m; i++) {
                    if (!turn[i]) {
                        continue;
                    }
                    long len = Math.min(chunk, ops.bytes(i) - done[i]);
                    NetChannel ch = channel(ops.peer(i));
                    if (sends) {
                        ch.send(stream, ops.address(i) + done[i], len);
                    } else {
                        ch.receiveCopy(stream, ops.address(i) + done[i], len);
                    }
                    done[i] += len;
                    more = true;
                }
            }
        }
    }

    /**
     * Transfers to this rank itself (a node of one rank's, paired and checked by the caller): the {@code k}-th
     * send to itself is one copy into its {@code k}-th receive, before the rounds, since it waits for nobody.
     */
    private void copyToItself(PeerOps ops, int m, RuntimeStream stream) {
        int from = 0;
        for (int i = 0; i < m; i++) {
            if (ops.peer(i) != rank || ops.isSend(i)) {
                continue;
            }
            while (from < m && !(ops.peer(from) == rank && ops.isSend(from))) {
                from++;
            }
            if (from < m) {
                stream.copy(ops.address(i), ops.address(from), Math.min(ops.bytes(i), ops.bytes(from)));
                from++;
            }
        }
    }

    /** The first unfinished transfer of each peer in this direction moves one chunk this round. */
    private void markTurns(PeerOps ops, int m, boolean sends) {
        for (int i = 0; i < m; i++) {
            boolean mine = ops.peer(i) != rank && ops.isSend(i) == sends && done[i] < ops.bytes(i);
            for (int j = 0; j < i && mine; j++) {
                mine = !(ops.isSend(j) == sends && ops.peer(j) == ops.peer(i) && done[j] < ops.bytes(j));
            }
            turn[i] = mine;
        }
    }

    /** The channel to {@code peer}, made (and its dial started) the first time either side needs it. */
    private synchronized NetChannel channel(int peer) {
        NetChannel ch = channels[peer];
        if (ch == null) {
            Emulation e = Emulation.parse(config.emulate());
            RailPacer pacer = new RailPacer(e.bytesPerSecond(Emulation.RAIL), e.latencyNanos(Emulation.RAIL),
                    LinkPacing.Clock.SYSTEM);
            NetChannel[] made = new NetChannel[1];
            ch = new NetChannel(backend, slots, chunk, pacer, "flexlink-peer-r" + rank + "-" + peer, "peer link",
                    "rank " + peer, "rank " + peer,
                    () -> linkFailed(peer, made[0]));
            made[0] = ch;
            channels[peer] = ch;
            ch.dialOut(() -> dial(peer));
        }
        return ch;
    }

    private SocketChannel dial(int peer) throws IOException {
        SocketChannel ch = SocketChannel.open();
        try {
            long deadline = System.nanoTime() + timeout.toNanos();
            ch.socket().connect(where[peer], RailConnector.millisLeft(deadline));
            RailConnector.tune(ch);
            ByteBuffer hello = ByteBuffer.allocate(HELLO).putInt(MAGIC).put(secret).putInt(rank).putInt(peer).flip();
            while (hello.hasRemaining()) {
                ch.write(hello);
            }
            return ch;
        } catch (IOException | RuntimeException e) {
            RailConnector.close(ch);
            throw new IOException("cannot connect to rank " + peer + " at " + where[peer] + ": " + e.getMessage(), e);
        }
    }

    /** Takes each peer's outgoing connection; drops any that does not present the secret and this rank. */
    private void acceptLoop() {
        while (!stopped) {
            SocketChannel ch;
            try {
                ch = listener.accept();
            } catch (IOException e) {
                if (!stopped) {
                    linkFailed(-1, null, "the listener for other nodes' transfers failed: " + e.getMessage());
                }
                return;
            }
            int from = hello(ch);
            if (from < 0) {
                RailConnector.close(ch); // not one of the job's ranks
                continue;
            }
            synchronized (this) { // no channel is made once closing began
                if (stopped || accepted[from]) {
                    RailConnector.close(ch);
                    continue;
                }
                accepted[from] = true;
                channel(from).acceptedIn(ch);
            }
        }
    }

    /** The sender's rank if {@code ch} presents the secret and names this rank, else -1. */
    private int hello(SocketChannel ch) {
        try {
            ch.socket().setSoTimeout((int) Math.min(Integer.MAX_VALUE, timeout.toMillis()));
            byte[] bytes = new byte[HELLO];
            new DataInputStream(ch.socket().getInputStream()).readFully(bytes);
            ByteBuffer h = ByteBuffer.wrap(bytes);
            byte[] theirs = new byte[16];
            boolean ok = h.getInt() == MAGIC;
            h.get(theirs);
            ok &= MessageDigest.isEqual(theirs, secret);
            int from = h.getInt();
            ok &= h.getInt() == rank && from >= 0 && from < n && from != rank;
            if (!ok) {
                return -1;
            }
            ch.socket().setSoTimeout(0);
            RailConnector.tune(ch);
            return from;
        } catch (IOException e) {
            return -1;
        }
    }

    private void linkFailed(int peer, NetChannel ch) {
        linkFailed(peer, ch, ch == null ? "failed" : ch.failure());
    }

    private void linkFailed(int peer, NetChannel ch, String why) {
        synchronized (this) {
            if (failure != null || stopped) {
                return;
            }
            failure = peer < 0 ? why : "the link between rank " + rank + " and rank " + peer + " failed: " + why;
        }
        onFailure.run();
    }

    @Override
    public PrimaryTransport transport() {
        return null;
    }

    @Override
    public FlexLinkException asyncError() {
        String f = failure;
        return f == null ? null : new FlexLinkException(Result.REMOTE_ERROR, f);
    }

    @Override
    public synchronized long bytesReceived() {
        long sum = 0;
        for (NetChannel ch : channels) {
            if (ch != null) {
                sum += ch.bytesReceived();
            }
        }
        return sum;
    }

    @Override
    public void abort() {
        NetChannel[] all;
        synchronized (this) {
            stopped = true;
            all = channels.clone();
        }
        RailConnector.close(listener);
        for (NetChannel ch : all) {
            if (ch != null) {
                ch.abort();
            }
        }
    }

    /** Sends what is enqueued and a goodbye on every link, then frees them; the streams are done by now. */
    @Override
    public void close() {
        NetChannel[] all;
        synchronized (this) {
            stopped = true;
            all = channels.clone();
        }
        RailConnector.close(listener);
        try {
            acceptor.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        for (NetChannel ch : all) {
            if (ch != null) {
                ch.close();
            }
        }
    }
}
