package io.flexlink.bootstrap;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import java.io.IOException;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

/**
 * The rendezvous port of a job launched from the environment (MASTER_ADDR:MASTER_PORT), in rank 0's
 * process: one listener for every communicator that process makes from the environment, each found by
 * its token. The port stays bound while any of them lives (so a second job's rank 0 cannot take it over
 * and run with this job's late ranks), and is freed when the last one closes. A HELLO of this job (its
 * secret) for a communicator not opened yet is told to RETRY; one claiming rank 0 is another job's rank 0
 * whose bind failed, and ends every communicator of this job served here ({@link PeerAdmission#collide}).
 */
final class SharedPort implements Admission {
    /** Open ports of this process by bind address and port. */
    private static final Map<String, SharedPort> OPEN = new HashMap<>();

    private final String key;
    private final String where;
    private final RendezvousDoor door;
    private final Refusals refusals;
    // guarded by SharedPort.class
    private final Map<String, RendezvousServer> servers = new HashMap<>();

    private SharedPort(String key, ServerSocketChannel listener, String where) throws IOException {
        this.key = key;
        this.where = where;
        this.refusals = new Refusals(where);
        this.door = new RendezvousDoor(listener, this, RendezvousServer.HELLO_TIMEOUT);
    }

    /**
     * Rank 0's rendezvous for {@code token} on {@code bind}:{@code port}, binding the port if no
     * communicator of this process serves it yet.
     *
     * @throws BindException when the port is taken by another process
     */
    static RendezvousServer serve(InetAddress bind, int port, byte[] token, byte[] secret, String where)
            throws IOException {
        String key = bind.getHostAddress() + "|" + port;
        synchronized (SharedPort.class) {
            SharedPort p = OPEN.get(key);
            if (p == null) {
                ServerSocketChannel listener = ServerSocketChannel.open();
                try {
                    listener.socket().setReuseAddress(true);
                    listener.bind(new InetSocketAddress(bind, port), 128);
                    p = new SharedPort(key, listener, where);
                } catch (IOException | RuntimeException e) {
                    listener.close();
                    throw e;
                }
                OPEN.put(key, p);
            }
            String t = HexFormat.of().formatHex(token);
            if (p.servers.containsKey(t)) {
                throw new FlexLinkException(Result.INVALID_USAGE, "rank 0 opened the rendezvous of one communicator "
                        + "at " + where + " twice");
            }
            RendezvousServer s = new RendezvousServer(p, token, secret, where);
            p.servers.put(t, s);
            return s;
        }
    }

    /** A communicator's rendezvous ended; the last one frees the port. */
    void remove(RendezvousServer s) {
        boolean last;
        synchronized (SharedPort.class) {
            servers.values().remove(s);
            last = servers.isEmpty() && OPEN.get(key) == this;
            if (last) {
                OPEN.remove(key);
            }
        }
        if (last) {
            door.close();
        }
    }

    @Override
    public String where() {
        return where;
    }

    @Override
    public void noteRefusal(String from, int rank, String why) {
        refusals.note(from, rank, why);
        for (RendezvousServer s : snapshot()) {
            s.noteRefusal(from, rank, why); // listed in their timeout errors
        }
    }

    @Override
    public void admit(SocketChannel ch, byte[] hello, String from) throws IOException {
        Wire.Hello h = Wire.Hello.parse(hello);
        RendezvousServer target = null;
        List<RendezvousServer> sameJob = new ArrayList<>();
        if (h != null && h.version() == Wire.VERSION) {
            synchronized (SharedPort.class) {
                target = servers.get(HexFormat.of().formatHex(h.token()));
                for (RendezvousServer s : servers.values()) {
                    if (s.secretIs(h.secret())) {
                        sameJob.add(s);
                    }
                }
            }
        }
        if (h != null && h.rank() == 0 && !sameJob.isEmpty()) {
            Wire.Conn conn = new Wire.Conn(ch.socket());
            String who = from + " (pid " + h.pid() + ")";
            for (RendezvousServer s : sameJob) {
                PeerAdmission.collide(s, conn, who, 0, "another process (" + who + ") claims rank 0 of this job: its "
                        + "rendezvous port is taken by this one");
            }
            conn.close();
        } else if (target != null) {
            target.admit(ch, hello, from); // the rest is checked outside the port's lock
        } else if (!sameJob.isEmpty()) {
            // this job's rank, for a communicator rank 0's process has not opened yet
            Wire.Conn conn = new Wire.Conn(ch.socket());
            conn.trySend(Wire.RETRY, 0, "rank 0 has not opened this communicator yet");
            conn.close();
        } else {
            anyServer(ch).admit(ch, hello, from); // refuses it: wrong secret, version, not a client
        }
    }

    /** The server that answers a connection no communicator here is for (it refuses it, naming why). */
    private RendezvousServer anyServer(SocketChannel ch) throws IOException {
        List<RendezvousServer> all = snapshot();
        if (all.isEmpty()) {
            ch.close();
            throw new IOException("the port is closing");
        }
        return all.get(0);
    }

    private List<RendezvousServer> snapshot() {
        synchronized (SharedPort.class) {
            return new ArrayList<>(servers.values());
        }
    }
}
