package io.flexlink.bootstrap;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.runtime.RankExchange;
import java.io.IOException;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Rank 0's side of the TCP rendezvous, and rank 0's exchange. It admits a peer that presents the id's
 * secret and token (compared in constant time), and runs each all-gather round as the hub: it waits for
 * every rank's DATA, then sends everybody the RESULT. The connections then stay open for the
 * communicator's life: a peer whose connection closes without a BYE is gone (its process died), and rank
 * 0 tells its listeners and every other rank (LOST); so is a peer whose creation failed (ABORT, with its
 * error). A {@link RendezvousDoor} reads the HELLOs; {@link PeerAdmission} checks them.
 *
 * <p>A rendezvous of an id derived from a launcher's environment (public values another job may share)
 * keeps listening while its communicator lives: a second process claiming rank 0 (its bind failed), or a
 * rank that joined already, proves that two jobs meet here, and rank 0 then fails this communicator on
 * every rank and the intruder too, rather than run with another job's rank. Others stop listening once
 * every rank has joined.
 */
final class RendezvousServer implements RankExchange, Admission {
    private static final Logger LOG = LoggerFactory.getLogger(RendezvousServer.class);
    /** How long a connecting peer may take to say its whole HELLO (a stuck or foreign client cannot hold a slot). */
    static final Duration HELLO_TIMEOUT = Duration.ofSeconds(5);
    /** DATA frames a peer may send ahead of rank 0's rounds (it waits for each RESULT, so 1 is the most it needs). */
    static final int MAX_AHEAD = 4;

    private final byte[] token;
    private final byte[] secret;
    private final String where;
    /** Stops listening: closes this server's own door, or leaves the shared port. */
    private final Runnable stopListening;
    private final boolean lingers;
    private final PeerWatch watch = new PeerWatch();
    private final Refusals refusals;
    // guarded by this
    private final Map<Integer, ServerPeer> peers = new TreeMap<>();
    private int nranks = -1;
    private Duration timeout = Duration.ZERO;
    private int round;
    private boolean closed;
    private boolean listening = true; // false once stopListening ran
    /** Why this communicator ended because another job met it here, or null. */
    private String collision;
    /** The address peers connect to (rank 0's, for subgroups it leads), or null when unknown. */
    private volatile InetAddress advertised;

    /** A rendezvous with a door of its own on {@code listener}; it stops listening once every rank joined. */
    RendezvousServer(ServerSocketChannel listener, byte[] token, byte[] secret, String where, Duration helloTimeout) {
        this(token, secret, where, false, s -> s.ownDoor(listener, helloTimeout));
    }

    /** A rendezvous served by {@code port} (shared by a job's communicators); it listens while it lives. */
    RendezvousServer(SharedPort port, byte[] token, byte[] secret, String where) {
        this(token, secret, where, true, s -> () -> port.remove(s));
    }

    private RendezvousServer(byte[] token, byte[] secret, String where, boolean lingers,
                             Function<RendezvousServer, Runnable> listen) {
        this.token = token.clone();
        this.secret = secret.clone();
        this.where = where;
        this.refusals = new Refusals(where);
        this.lingers = lingers;
        this.stopListening = listen.apply(this);
    }

    private Runnable ownDoor(ServerSocketChannel listener, Duration helloTimeout) {
        try {
            return new RendezvousDoor(listener, this, helloTimeout)::close;
        } catch (IOException e) {
            try {
                listener.close();
            } catch (IOException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw new FlexLinkException(Result.SYSTEM_ERROR, "rendezvous " + where + ": cannot watch the port: " + e, e);
        }
    }

    /** Makes this rank 0's exchange of an {@code n}-rank communicator. */
    RendezvousServer attach(int n, Duration roundTimeout) {
        List<ServerPeer> wrong = new ArrayList<>();
        synchronized (this) {
            if (nranks >= 0) {
                throw new FlexLinkException(Result.INVALID_USAGE, "rank 0 joined the rendezvous at " + where + " twice");
            }
            nranks = n;
            timeout = roundTimeout;
            for (ServerPeer p : peers.values()) {
                if (p.claimedRanks != n || p.rank >= n) {
                    wrong.add(p);
                    // refused, not lost: its reader must not report it gone (that would abort the others)
                    p.gone = true;
                    p.why = "refused: " + PeerAdmission.worldSizes(p.claimedRanks, n);
                }
            }
            peers.values().removeAll(wrong);
            stopListeningWhenFull();
        }
        for (ServerPeer p : wrong) {
            refuse(p.conn, p.from, p.rank, PeerAdmission.worldSizes(p.claimedRanks, n));
        }
        return this;
    }

    RendezvousServer advertise(InetAddress address) {
        advertised = address;
        return this;
    }

    /** An address of this host the peers reach: the one they were given, unless loopback ({@link ServerPeer#reachedAt}). */
    synchronized InetAddress advertised() {
        InetAddress a = advertised != null ? advertised : InetAddress.getLoopbackAddress();
        return a.isLoopbackAddress() ? ServerPeer.reachedAt(peers.values(), a) : a;
    }

    @Override
    public String where() {
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

    /** The ranks whose process is gone, with why (tests). */
    Map<Integer, String> lostRanks() {
        return watch.lostRanks();
    }

    /** True when {@code candidate} is this rendezvous's secret (constant time: no timing oracle on it). */
    boolean secretIs(byte[] candidate) {
        return MessageDigest.isEqual(candidate, secret);
    }

    boolean tokenIs(byte[] candidate) {
        return MessageDigest.isEqual(candidate, token);
    }

    @Override
    public void admit(SocketChannel ch, byte[] hello, String from) throws IOException {
        PeerAdmission.admit(this, ch, hello, from); // the checks, in order
    }

    /**
     * Adds a peer whose secret and token are right: returns null when it joined, else a refusal, or a
     * {@link PeerAdmission.Duplicate} when its rank joined already (a collision).
     */
    synchronized Object add(Wire.Conn conn, Socket s, String from, int claimed, int rank) throws IOException {
        if (closed || !listening) {
            return "the rendezvous is closed";
        } else if (nranks >= 0 && claimed != nranks) {
            return PeerAdmission.worldSizes(claimed, nranks);
        } else if (rank < 1 || rank >= claimed) {
            return "rank " + rank + " is not a peer rank of " + claimed;
        } else if (peers.containsKey(rank)) {
            return new PeerAdmission.Duplicate(peers.get(rank).from);
        }
        ServerPeer peer = new ServerPeer(conn, rank, claimed, from);
        peers.put(rank, peer);
        conn.send(Wire.ACCEPT, 0, new byte[0]);
        s.setKeepAlive(true);
        notifyAll();
        stopListeningWhenFull();
        peer.startReading(this);
        return null;
    }

    /**
     * Two jobs meet here ({@link PeerAdmission#collide} refused the intruder): ends this communicator on
     * every rank (the pending and later rounds fail, the listeners hear that {@code rank} is gone, the
     * peers get LOST).
     */
    void collided(int rank, String why) {
        List<ServerPeer> others;
        synchronized (this) {
            if (collision != null || closed) {
                return;
            }
            collision = why;
            others = ServerPeer.alive(peers.values());
            notifyAll();
        }
        LOG.error("INIT rendezvous {}: {}", where, why);
        for (ServerPeer o : others) {
            o.conn.trySend(Wire.LOST, rank, why);
        }
        watch.lost(rank, why);
    }

    void refuse(Wire.Conn conn, String from, int rank, String why) {
        noteRefusal(from, rank, why);
        conn.trySend(Wire.REJECT, 0, why);
        conn.close();
    }

    @Override
    public void noteRefusal(String from, int rank, String why) {
        refusals.note(from, rank, why);
    }

    /** Frees the port once every rank is in (unless it lingers): nobody else may join this communicator. */
    private void stopListeningWhenFull() {
        if (!lingers && listening && nranks >= 0 && peers.size() == nranks - 1) {
            listening = false;
            stopListening.run();
        }
    }

    // ---- a connected peer's frames (its reader thread) ----

    /** Queues a DATA frame of {@code p}; false when it is too far ahead. */
    synchronized boolean queue(ServerPeer p, Wire.Frame f) {
        if (p.frames.size() >= MAX_AHEAD) {
            return false;
        }
        p.frames.add(f);
        notifyAll();
        return true;
    }

    synchronized void leftCleanly(ServerPeer p) {
        p.gone = true;
        p.why = "it left (closed its communicator)";
        notifyAll();
    }

    /** {@code p}'s connection ended for {@code why}: tells the listeners and the other ranks, once. */
    void peerEnded(ServerPeer p, String why) {
        boolean report;
        List<ServerPeer> others;
        synchronized (this) {
            report = !closed && !p.gone;
            if (!p.gone) {
                p.gone = true;
                p.why = why;
            }
            others = ServerPeer.alive(peers.values());
            notifyAll();
        }
        p.conn.close();
        if (report) {
            LOG.warn("INIT rendezvous {}: rank {} is gone: {}", where, p.rank, why);
            for (ServerPeer o : others) {
                o.conn.trySend(Wire.LOST, p.rank, why);
            }
            watch.lost(p.rank, why);
        }
    }

    // ---- the exchange ----

    @Override
    public byte[][] allGather(byte[] mine) {
        byte[][] all;
        List<ServerPeer> targets;
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
                String gone = collision != null ? collision : ServerPeer.goneRanks(peers.values());
                if (gone != null) {
                    throw failRound(k, "communicator creation failed in round " + k + " of the rendezvous at "
                            + where + ": " + gone);
                }
                List<Integer> missing = ServerPeer.missing(peers, nranks);
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
            for (ServerPeer p : peers.values()) {
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
        for (ServerPeer p : targets) {
            try {
                p.conn.send(Wire.RESULT, k, packed);
            } catch (IOException e) {
                // its reader reports the loss
            }
        }
        return all;
    }

    /** Tells every connected peer why the round failed (they report the same), and returns the error. */
    private FlexLinkException failRound(int k, String message) {
        for (ServerPeer p : ServerPeer.alive(peers.values())) {
            p.conn.trySend(Wire.ERROR, k, message);
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
        List<ServerPeer> all;
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
        stopListeningOnce();
        for (ServerPeer p : all) {
            if (type >= 0) {
                p.conn.trySend(type, k, why);
            }
            p.conn.close();
        }
        TcpRendezvous.forget(this);
    }

    private void stopListeningOnce() {
        boolean was;
        synchronized (this) {
            was = listening;
            listening = false;
        }
        if (was) {
            stopListening.run();
        }
    }

    @Override
    public String toString() {
        return "RendezvousServer[" + where + "]";
    }
}
