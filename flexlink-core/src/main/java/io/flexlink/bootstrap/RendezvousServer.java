package io.flexlink.bootstrap;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.runtime.RankExchange;
import java.io.EOFException;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Rank 0's side of the TCP rendezvous, and rank 0's exchange. It admits a peer that presents the id's
 * secret and token (compared in constant time), and runs each all-gather round as the hub: it waits for
 * every rank's DATA, then sends everybody the RESULT. It stops listening once every rank has joined. The
 * connections then stay open for the communicator's life: a peer whose connection closes without a BYE
 * is gone (its process died), and rank 0 tells its listeners and every other rank (LOST).
 */
final class RendezvousServer implements RankExchange {
    private static final Logger LOG = LoggerFactory.getLogger(RendezvousServer.class);
    /** How long a connecting peer may take to say HELLO (a stuck or foreign client cannot hold the door). */
    private static final int HELLO_MILLIS = 5000;
    private static final int HELLO_BYTES = 48;

    private final ServerSocket listener;
    private final byte[] token;
    private final byte[] secret;
    private final String where;
    private final PeerWatch watch = new PeerWatch();
    // guarded by this
    private final Map<Integer, Peer> peers = new TreeMap<>();
    private final List<String> refusals = new ArrayList<>();
    private int nranks = -1;
    private Duration timeout = Duration.ZERO;
    private int round;
    private boolean closed;

    /** A connected rank. */
    private static final class Peer {
        final Wire.Conn conn;
        final int rank;
        final int claimedRanks;
        final String from;
        final ArrayDeque<Wire.Frame> frames = new ArrayDeque<>();
        boolean gone;
        String why;

        Peer(Wire.Conn conn, int rank, int claimedRanks, String from) {
            this.conn = conn;
            this.rank = rank;
            this.claimedRanks = claimedRanks;
            this.from = from;
        }
    }

    RendezvousServer(ServerSocket listener, byte[] token, byte[] secret, String where) {
        this.listener = listener;
        this.token = token.clone();
        this.secret = secret.clone();
        this.where = where;
        Thread acceptor = new Thread(this::acceptLoop, "flexlink-rendezvous-accept-" + listener.getLocalPort());
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** Makes this rank 0's exchange of an {@code n}-rank communicator. */
    RendezvousServer attach(int n, Duration roundTimeout) {
        List<Peer> wrong = new ArrayList<>();
        synchronized (this) {
            if (nranks >= 0) {
                throw new FlexLinkException(Result.INVALID_USAGE, "rank 0 joined the rendezvous at " + where + " twice");
            }
            nranks = n;
            timeout = roundTimeout;
            for (Peer p : peers.values()) {
                if (p.claimedRanks != n || p.rank >= n) {
                    wrong.add(p);
                }
            }
            peers.values().removeAll(wrong);
            stopListeningWhenFull();
        }
        for (Peer p : wrong) {
            refuse(p.conn, p.from, p.rank, "it says " + p.claimedRanks + " ranks, rank 0 says " + n);
        }
        return this;
    }

    String where() {
        return where;
    }

    @Override
    public boolean crossProcess() {
        return true;
    }

    @Override
    public void onPeerLost(PeerLossListener listener) {
        watch.add(listener);
    }

    /** The ranks whose process is gone, with why. */
    Map<Integer, String> lostRanks() {
        return watch.lostRanks();
    }

    // ---- admitting peers ----

    private void acceptLoop() {
        while (true) {
            Socket s;
            try {
                s = listener.accept();
            } catch (IOException e) {
                return; // closed: every rank joined, or the exchange closed
            }
            try {
                admit(s);
            } catch (IOException | RuntimeException e) {
                LOG.debug("rendezvous {}: handshake with {} failed: {}", where, s.getRemoteSocketAddress(), e.toString());
                closeQuietly(s);
            }
        }
    }

    private void admit(Socket s) throws IOException {
        s.setSoTimeout(HELLO_MILLIS);
        s.setTcpNoDelay(true);
        Wire.Conn conn = new Wire.Conn(s);
        String from = String.valueOf(s.getRemoteSocketAddress());
        Wire.Frame f = conn.read();
        ByteBuffer b = ByteBuffer.wrap(f.payload);
        if (f.type != Wire.HELLO || f.payload.length != HELLO_BYTES || b.getInt() != Wire.MAGIC) {
            refuse(conn, from, -1, "not a FlexLink rendezvous client");
            return;
        }
        int version = b.getInt();
        byte[] theirToken = new byte[8];
        byte[] theirSecret = new byte[16];
        b.get(theirToken).get(theirSecret);
        int claimed = b.getInt();
        int rank = b.getInt();
        long pid = b.getLong();
        from = from + " (pid " + pid + ")";
        String why = null;
        if (version != Wire.VERSION) {
            why = "protocol version " + version + ", rank 0 speaks " + Wire.VERSION;
        } else if (!MessageDigest.isEqual(theirSecret, secret)) { // constant time: no timing oracle on the secret
            why = "wrong secret";
        } else if (!MessageDigest.isEqual(theirToken, token)) {
            why = "it joins another communicator (different unique id or job)";
        } else if (rank < 1 || rank >= claimed) {
            why = "rank " + rank + " is not a peer rank of " + claimed;
        }
        Peer peer = null;
        if (why == null) {
            synchronized (this) {
                if (closed || listener.isClosed()) {
                    why = "the rendezvous is closed";
                } else if (nranks >= 0 && claimed != nranks) {
                    why = "it says " + claimed + " ranks, rank 0 says " + nranks;
                } else if (peers.containsKey(rank)) {
                    why = "rank " + rank + " already joined from " + peers.get(rank).from;
                } else {
                    peer = new Peer(conn, rank, claimed, from);
                    peers.put(rank, peer);
                    conn.send(Wire.ACCEPT, 0, new byte[0]);
                    s.setSoTimeout(0);
                    s.setKeepAlive(true);
                    notifyAll();
                    stopListeningWhenFull();
                }
            }
        }
        if (why != null) {
            refuse(conn, from, rank, why);
            return;
        }
        Peer p = peer;
        Thread reader = new Thread(() -> read(p), "flexlink-rendezvous-r" + rank);
        reader.setDaemon(true);
        reader.start();
    }

    private void refuse(Wire.Conn conn, String from, int rank, String why) {
        LOG.warn("rendezvous {}: refused a peer from {} claiming rank {}: {}", where, from, rank, why);
        synchronized (this) {
            refusals.add("rank " + rank + " from " + from + ": " + why);
        }
        conn.trySend(Wire.REJECT, 0, why);
        conn.close();
    }

    /** Frees the port once every rank is in: nobody else may join this communicator. */
    private void stopListeningWhenFull() {
        if (nranks >= 0 && peers.size() == nranks - 1) {
            closeQuietly(listener);
        }
    }

    // ---- a connected peer ----

    private void read(Peer p) {
        String why;
        try {
            while (true) {
                Wire.Frame f = p.conn.read();
                if (f.type == Wire.DATA) {
                    synchronized (this) {
                        p.frames.add(f);
                        notifyAll();
                    }
                } else if (f.type == Wire.BYE) {
                    synchronized (this) {
                        p.gone = true;
                        p.why = "it left (closed its communicator)";
                        notifyAll();
                    }
                    p.conn.close();
                    return;
                } else {
                    why = "it sent an unexpected frame (type " + f.type + ")";
                    break;
                }
            }
        } catch (EOFException e) {
            why = "its connection closed without a goodbye (process exited or was killed)";
        } catch (IOException e) {
            why = "its connection failed: " + e.getMessage();
        }
        boolean report;
        List<Peer> others = new ArrayList<>();
        synchronized (this) {
            report = !closed && !p.gone;
            if (!p.gone) {
                p.gone = true;
                p.why = why;
            }
            for (Peer o : peers.values()) {
                if (!o.gone) {
                    others.add(o);
                }
            }
            notifyAll();
        }
        p.conn.close();
        if (report) {
            LOG.warn("rendezvous {}: rank {} is gone: {}", where, p.rank, why);
            for (Peer o : others) {
                o.conn.trySend(Wire.LOST, p.rank, why);
            }
            watch.lost(p.rank, why);
        }
    }

    // ---- the exchange ----

    @Override
    public byte[][] allGather(byte[] mine) {
        byte[][] all;
        List<Peer> targets;
        int k;
        synchronized (this) {
            if (nranks < 0) {
                throw new FlexLinkException(Result.INTERNAL_ERROR, "rendezvous " + where + ": rank 0 has not joined");
            }
            k = round++;
            long deadline = System.nanoTime() + timeout.toNanos();
            while (true) {
                if (closed) {
                    throw new FlexLinkException(Result.INVALID_USAGE, "rendezvous " + where + " is closed");
                }
                String gone = goneRanks();
                if (gone != null) {
                    throw failRound(k, "communicator creation failed in round " + k + " of the rendezvous at "
                            + where + ": " + gone);
                }
                List<Integer> missing = missing();
                if (missing.isEmpty()) {
                    break;
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw failRound(k, "communicator creation timed out after " + timeout.toMillis()
                            + " ms waiting for ranks " + missing + " of " + nranks + " (TCP rendezvous at " + where
                            + ", round " + k + ")" + (refusals.isEmpty() ? "" : "; refused: " + refusals));
                }
                try {
                    wait(Math.max(1, left / 1_000_000));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new FlexLinkException(Result.SYSTEM_ERROR, "communicator creation interrupted");
                }
            }
            all = new byte[nranks][];
            all[0] = mine.clone();
            for (Peer p : peers.values()) {
                Wire.Frame f = p.frames.poll();
                if (f.round != k) {
                    throw failRound(k, "rendezvous " + where + ": rank " + p.rank + " is in round " + f.round
                            + ", rank 0 in round " + k + " (the ranks ran different code)");
                }
                all[p.rank] = f.payload;
            }
            targets = new ArrayList<>(peers.values());
        }
        byte[] packed = Wire.packAll(all);
        for (Peer p : targets) {
            try {
                p.conn.send(Wire.RESULT, k, packed);
            } catch (IOException e) {
                // its reader reports the loss
            }
        }
        return all;
    }

    /** Ranks that left or whose process is gone, or null. */
    private String goneRanks() {
        StringBuilder sb = null;
        for (Peer p : peers.values()) {
            if (p.gone) {
                sb = (sb == null ? new StringBuilder() : sb.append("; ")).append("rank ").append(p.rank)
                        .append(" is gone: ").append(p.why);
            }
        }
        return sb == null ? null : sb.toString();
    }

    private List<Integer> missing() {
        List<Integer> out = new ArrayList<>();
        for (int r = 1; r < nranks; r++) {
            Peer p = peers.get(r);
            if (p == null || p.frames.isEmpty()) {
                out.add(r);
            }
        }
        return out;
    }

    /** Tells every connected peer why the round failed (they report the same), and returns the error. */
    private FlexLinkException failRound(int k, String message) {
        for (Peer p : peers.values()) {
            if (!p.gone) {
                p.conn.trySend(Wire.ERROR, k, message);
            }
        }
        return new FlexLinkException(Result.REMOTE_ERROR, message);
    }

    @Override
    public void close() {
        List<Peer> all;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            all = new ArrayList<>(peers.values());
            notifyAll();
        }
        closeQuietly(listener);
        for (Peer p : all) {
            p.conn.trySend(Wire.BYE, 0, "");
            p.conn.close();
        }
        TcpRendezvous.forget(this);
    }

    /** Test hook: drops every connection without a goodbye, as a killed rank 0 would. */
    void dropWithoutGoodbye() {
        List<Peer> all;
        synchronized (this) {
            closed = true;
            all = new ArrayList<>(peers.values());
            notifyAll();
        }
        closeQuietly(listener);
        for (Peer p : all) {
            p.conn.close();
        }
    }

    private static void closeQuietly(java.io.Closeable c) {
        try {
            c.close();
        } catch (IOException e) {
            // closing anyway
        }
    }

    byte[] token() {
        return token.clone();
    }

    @Override
    public String toString() {
        return "RendezvousServer[" + where + "]";
    }
}
