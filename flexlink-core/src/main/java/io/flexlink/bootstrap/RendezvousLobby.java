package io.flexlink.bootstrap;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.UniqueId;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The lobby of a unique id that any process of the machine may join, whichever process runs rank 0 (the
 * NCCL facade's {@code ncclGetUniqueId}, as NCCL allows): it listens at the id's address and tells every
 * rank where rank 0's own rendezvous is. Rank 0 opens that rendezvous in {@code initRank} at a port the
 * system picks on the same address and says so (in this process directly; from another one over a
 * connection: HELLO as rank 0, REDIRECT with its port, answered ACCEPT or REJECT). Every other rank's
 * HELLO is answered REDIRECT to that port, at once or as soon as rank 0 has said it (until then the
 * connection waits, bounded by the rank's own timeout). So the ranks never depend on the process that
 * made the id once they have met: it may exit.
 *
 * <p>Lifetime: the lobby closes (port and its threads freed) once rank 0 said where it is and every other
 * rank was sent on, or when {@code idle} (flexlink.initTimeout) passes with no rank arriving, counted from
 * the id's creation and again from each arrival. Ranks that come later fail naming the closed lobby.
 */
final class RendezvousLobby implements Admission {
    private static final Logger LOG = LoggerFactory.getLogger(RendezvousLobby.class);
    /** Open lobbies of this process, by token. */
    private static final Map<String, RendezvousLobby> OPEN = new ConcurrentHashMap<>();

    private final byte[] token;
    private final byte[] secret;
    private final String where;
    private final String key;
    private final long idleNanos;
    private final Refusals refusals;
    private final RendezvousDoor door;
    // guarded by this
    private int rank0Port = -1;
    private int nranks;
    private String rank0From;
    private final List<Held> held = new ArrayList<>();
    private final Set<Integer> sentOn = new HashSet<>();
    private long idleDeadline;
    private String closed;

    /** A rank waiting for rank 0 to say where it is. */
    private record Held(Wire.Conn conn, int rank) {
    }

    private RendezvousLobby(ServerSocketChannel listener, UniqueId id, String where, Duration idle) throws IOException {
        this.token = id.tokenBytes();
        this.secret = id.secret();
        this.key = id.token();
        this.where = where;
        this.idleNanos = idle.toNanos();
        this.refusals = new Refusals(where);
        this.idleDeadline = System.nanoTime() + idleNanos;
        this.door = new RendezvousDoor(listener, this, RendezvousServer.HELLO_TIMEOUT);
    }

    /** Opens the lobby of a fresh id on {@code listener} (bound to {@code address}); it owns the listener. */
    static UniqueId open(ServerSocketChannel listener, InetAddress address, String where, Duration idle) {
        UniqueId id = UniqueId.withAddress(address.getAddress(), listener.socket().getLocalPort(), UniqueId.LOBBY);
        RendezvousLobby lobby;
        try {
            lobby = new RendezvousLobby(listener, id, where, idle);
        } catch (IOException e) {
            try {
                listener.close();
            } catch (IOException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw new FlexLinkException(Result.SYSTEM_ERROR, "unique id lobby " + where + ": cannot watch the port: "
                    + e, e);
        }
        OPEN.put(lobby.key, lobby);
        Thread t = new Thread(lobby::expire, "flexlink-id-lobby-" + listener.socket().getLocalPort());
        t.setDaemon(true);
        t.start();
        LOG.debug("INIT rendezvous: the lobby of unique id {} listens on {} (for at most {} ms without a rank)",
                id, where, idle.toMillis());
        return id;
    }

    /** True while the lobby of {@code id} is open in this process (tests, and rank 0's choice of path). */
    static boolean isOpen(UniqueId id) {
        return OPEN.containsKey(id.token());
    }

    /**
     * Tells the lobby of {@code id} that rank 0 of {@code n} ranks listens at {@code port} of the id's address:
     * directly when the lobby is in this process, else over a connection to it.
     */
    static void register(UniqueId id, int n, int port, Duration timeout) {
        RendezvousLobby local = OPEN.get(id.token());
        if (local != null) {
            String refusal = local.registered(n, port, "this process (pid " + ProcessHandle.current().pid() + ")");
            if (refusal != null) {
                throw new FlexLinkException(Result.INVALID_USAGE, "rank 0: the unique id's lobby refused it: " + refusal);
            }
            return;
        }
        InetSocketAddress at = new InetSocketAddress(inet(id.address()), id.port());
        String where = at.getAddress().getHostAddress() + ":" + id.port();
        try (Socket s = new Socket()) {
            s.connect(at, (int) Math.max(1, Math.min(timeout.toMillis(), 5000)));
            s.setSoTimeout((int) Math.max(1, Math.min(timeout.toMillis(), Integer.MAX_VALUE)));
            Wire.Conn c = new Wire.Conn(s);
            c.send(Wire.HELLO, 0, Wire.hello(id.tokenBytes(), id.secret(), n, 0));
            Wire.Frame f = c.read(Wire.MAX_TEXT);
            if (f.type == Wire.ACCEPT) {
                c.send(Wire.REDIRECT, 0, ByteBuffer.allocate(4).putInt(port).array());
                f = c.read(Wire.MAX_TEXT);
            }
            if (f.type != Wire.ACCEPT) {
                throw new FlexLinkException(Result.INVALID_USAGE, "rank 0: the unique id's lobby at " + where
                        + " refused it: " + (f.type == Wire.REJECT ? f.text() : "frame type " + f.type));
            }
        } catch (IOException e) {
            throw new FlexLinkException(Result.REMOTE_ERROR, "rank 0 cannot reach the unique id's lobby at " + where
                    + " (" + e.getMessage() + "): the id expired (no rank arrived within flexlink.initTimeout), all "
                    + "its ranks met already, or the process that made it exited before rank 0 came", e);
        }
    }

    /** Rank 0 is at {@code port}: sends on every waiting rank; null when accepted, else why not. */
    private String registered(int n, int port, String from) {
        List<Held> waiting;
        boolean done;
        synchronized (this) {
            if (closed != null) {
                return "it closed: " + closed;
            }
            if (rank0Port >= 0) {
                return "rank 0 joined it already, from " + rank0From;
            }
            rank0Port = port;
            nranks = n;
            rank0From = from;
            idleDeadline = System.nanoTime() + idleNanos;
            waiting = new ArrayList<>(held);
            held.clear();
            for (Held h : waiting) {
                count(h.rank);
            }
            done = doneLocked();
        }
        for (Held h : waiting) {
            sendOn(h.conn, port);
        }
        if (done) {
            door.close();
        }
        return null;
    }

    @Override
    public void admit(SocketChannel ch, byte[] hello, String from) throws IOException {
        Socket s = ch.socket();
        Wire.Conn conn = new Wire.Conn(s);
        Wire.Hello h = Wire.Hello.parse(hello);
        String why = h == null ? "not a FlexLink rendezvous client"
                : h.version() != Wire.VERSION ? "protocol version " + h.version() + ", the lobby speaks " + Wire.VERSION
                : !MessageDigest.isEqual(h.secret(), secret) ? "wrong secret"
                : !MessageDigest.isEqual(h.token(), token) ? "it joins another communicator (different unique id)"
                : null;
        if (why != null) {
            refuse(conn, from, h == null ? -1 : h.rank(), why);
            return;
        }
        from = from + " (pid " + h.pid() + ")";
        if (h.rank() == 0) {
            // rank 0 of another process says where it listens (bounded: the door's thread waits on it)
            conn.send(Wire.ACCEPT, 0, new byte[0]);
            s.setSoTimeout((int) RendezvousServer.HELLO_TIMEOUT.toMillis());
            Wire.Frame f = conn.read(Wire.MAX_TEXT);
            String refusal = f.type != Wire.REDIRECT || f.payload.length != 4 ? "rank 0 did not say its port"
                    : registered(h.nranks(), ByteBuffer.wrap(f.payload).getInt(), from);
            if (refusal != null) {
                refuse(conn, from, 0, refusal);
            } else {
                conn.trySend(Wire.ACCEPT, 0, "");
                conn.close();
            }
            return;
        }
        int port = -1;
        boolean done = false;
        synchronized (this) {
            if (closed != null) {
                why = "the unique id's lobby closed: " + closed;
            } else if (rank0Port >= 0) {
                count(h.rank());
                port = rank0Port;
                done = doneLocked();
            } else {
                held.add(new Held(conn, h.rank()));
            }
            idleDeadline = System.nanoTime() + idleNanos;
        }
        if (why != null) {
            refuse(conn, from, h.rank(), why);
        } else if (port >= 0) {
            sendOn(conn, port);
        }
        if (done) {
            door.close();
        }
    }

    private void count(int rank) {
        if (rank >= 1 && rank < nranks) {
            sentOn.add(rank); // others are refused by rank 0's rendezvous, which says why
        }
    }

    private static void sendOn(Wire.Conn conn, int port) {
        try {
            conn.send(Wire.REDIRECT, 0, ByteBuffer.allocate(4).putInt(port).array());
        } catch (IOException e) {
            // it gave up waiting; it reports its own timeout
        }
        conn.close();
    }

    /**
     * Closes the lobby once rank 0 is known and every other rank was counted, before the last one is sent
     * on: by the time a rank hears where rank 0 is, the lobby of a completed meeting is gone.
     */
    private boolean doneLocked() {
        if (rank0Port < 0 || sentOn.size() < nranks - 1) {
            return false;
        }
        closed = "every rank was sent on to rank 0";
        OPEN.remove(key, this);
        notifyAll();
        return true;
    }

    /** The lobby's clock: closes it once no rank arrived for {@code idle}. */
    private void expire() {
        synchronized (this) {
            while (closed == null) {
                long left = idleDeadline - System.nanoTime();
                if (left <= 0) {
                    break;
                }
                try {
                    wait(Math.max(1, left / 1_000_000));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
        }
        close("no rank arrived for " + idleNanos / 1_000_000 + " ms (flexlink.initTimeout)");
    }

    /** Frees the port, refuses the ranks still waiting; idempotent. */
    void close(String why) {
        List<Held> waiting;
        synchronized (this) {
            if (closed != null) {
                return;
            }
            closed = why;
            waiting = new ArrayList<>(held);
            held.clear();
            notifyAll();
        }
        OPEN.remove(key, this);
        door.close();
        LOG.debug("INIT rendezvous: the unique id lobby {} closed: {}", where, why);
        for (Held h : waiting) {
            refuse(h.conn, "rank " + h.rank, h.rank, "the unique id's lobby closed before rank 0 came: " + why);
        }
    }

    private void refuse(Wire.Conn conn, String from, int rank, String why) {
        noteRefusal(from, rank, why);
        conn.trySend(Wire.REJECT, 0, why);
        conn.close();
    }

    @Override
    public void noteRefusal(String from, int rank, String why) {
        refusals.note(from, rank, why);
    }

    @Override
    public String where() {
        return where;
    }

    private static InetAddress inet(byte[] address) {
        try {
            return InetAddress.getByAddress(address);
        } catch (java.net.UnknownHostException e) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "commId: bad address bytes", e);
        }
    }
}
