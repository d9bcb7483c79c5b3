package io.flexlink.bootstrap;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.runtime.RankExchange;
import java.io.EOFException;
import java.io.IOException;
import java.net.Socket;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
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
 * is gone (its process died), and rank 0 tells its listeners and every other rank (LOST); so is a peer
 * whose creation failed (ABORT, with its error). Connections are taken in and their HELLOs read by a
 * {@link RendezvousDoor}, which hands complete HELLOs to {@link #admit}.
 */
final class RendezvousServer implements RankExchange {
    private static final Logger LOG = LoggerFactory.getLogger(RendezvousServer.class);
    /** How long a connecting peer may take to say its whole HELLO (a stuck or foreign client cannot hold a slot). */
    static final Duration HELLO_TIMEOUT = Duration.ofSeconds(5);
    /** DATA frames a peer may send ahead of rank 0's rounds (it waits for each RESULT, so 1 is the most it needs). */
    static final int MAX_AHEAD = 4;

    private final RendezvousDoor door;
    private final byte[] token;
    private final byte[] secret;
    private final String where;
    private final PeerWatch watch = new PeerWatch();
    private final Refusals refusals;
    // guarded by this
    private final Map<Integer, Peer> peers = new TreeMap<>();
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

    RendezvousServer(ServerSocketChannel listener, byte[] token, byte[] secret, String where, Duration helloTimeout) {
        this.token = token.clone();
        this.secret = secret.clone();
        this.where = where;
        this.refusals = new Refusals(where);
        try {
            this.door = new RendezvousDoor(listener, this, helloTimeout);
        } catch (IOException e) {
            closeQuietly(listener);
            throw new FlexLinkException(Result.SYSTEM_ERROR, "rendezvous " + where + ": cannot watch the port: " + e, e);
        }
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
                    // refused, not lost: its reader must not report it gone (that would abort the others)
                    p.gone = true;
                    p.why = "refused: it says " + p.claimedRanks + " ranks, rank 0 says " + n;
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

    /** Checks a complete HELLO (on the door's thread; {@code ch} blocks) and admits or refuses its sender. */
    void admit(SocketChannel ch, byte[] hello, String from) throws IOException {
        Socket s = ch.socket();
        Wire.Conn conn = new Wire.Conn(s);
        Wire.Hello h = Wire.Hello.parse(hello);
        if (h == null) {
            refuse(conn, from, -1, "not a FlexLink rendezvous client");
            return;
        }
        from = from + " (pid " + h.pid() + ")";
        int claimed = h.nranks();
        int rank = h.rank();
        String why = null;
        if (h.version() != Wire.VERSION) {
            why = "protocol version " + h.version() + ", rank 0 speaks " + Wire.VERSION;
        } else if (!MessageDigest.isEqual(h.secret(), secret)) { // constant time: no timing oracle on the secret
            why = "wrong secret";
        } else if (!MessageDigest.isEqual(h.token(), token)) {
            why = "it joins another communicator (different unique id or job)";
        } else if (rank < 1 || rank >= claimed) {
            why = "rank " + rank + " is not a peer rank of " + claimed;
        }
        Peer peer = null;
        if (why == null) {
            synchronized (this) {
                if (closed || door.isClosed()) {
                    why = "the rendezvous is closed";
                } else if (nranks >= 0 && claimed != nranks) {
                    why = "it says " + claimed + " ranks, rank 0 says " + nranks;
                } else if (peers.containsKey(rank)) {
                    why = "rank " + rank + " already joined from " + peers.get(rank).from;
                } else {
                    peer = new Peer(conn, rank, claimed, from);
                    peers.put(rank, peer);
                    conn.send(Wire.ACCEPT, 0, new byte[0]);
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
        noteRefusal(from, rank, why);
        conn.trySend(Wire.REJECT, 0, why);
        conn.close();
    }

    void noteRefusal(String from, int rank, String why) {
        refusals.note(from, rank, why);
    }

    /** Frees the port once every rank is in: nobody else may join this communicator. */
    private void stopListeningWhenFull() {
        if (nranks >= 0 && peers.size() == nranks - 1) {
            door.close();
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
                        if (p.frames.size() < MAX_AHEAD) {
                            p.frames.add(f);
                            notifyAll();
                            continue;
                        }
                    }
                    why = "it broke the protocol: it sent more than " + MAX_AHEAD + " rounds ahead of rank 0";
                    break;
                } else if (f.type == Wire.ABORT) {
                    why = "its communicator creation failed: " + f.text();
                    break;
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
        } catch (Wire.ProtocolException e) {
            why = "it broke the protocol: " + e.getMessage();
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
            LOG.warn("INIT rendezvous {}: rank {} is gone: {}", where, p.rank, why);
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
                            + ", round " + k + ")" + refusals.summary());
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
        end(Wire.BYE, "");
    }

    /** Tells every connected peer why rank 0's creation failed (their rounds fail with it), and closes. */
    @Override
    public void fail(Throwable cause) {
        end(Wire.ABORT, Wire.describe(cause));
    }

    private void end(int type, String why) {
        List<Peer> all;
        int k;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            k = round;
            all = new ArrayList<>(peers.values());
            notifyAll();
        }
        door.close();
        for (Peer p : all) {
            p.conn.trySend(type, k, why);
            p.conn.close();
        }
        TcpRendezvous.forget(this);
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
