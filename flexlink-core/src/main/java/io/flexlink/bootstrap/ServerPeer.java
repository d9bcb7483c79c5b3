package io.flexlink.bootstrap;

import java.io.EOFException;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;

/**
 * A rank connected to rank 0's rendezvous, and the thread that reads its frames for the connection's
 * life: DATA frames queue for the rounds (at most {@link RendezvousServer#MAX_AHEAD}), a BYE is a clean
 * goodbye, anything else — ABORT, a closed connection, a broken frame — makes the peer gone, which
 * {@link RendezvousServer#peerEnded} reports. Fields other than the final ones are guarded by the server.
 */
final class ServerPeer {
    final Wire.Conn conn;
    final int rank;
    final int claimedRanks;
    final String from;
    final ArrayDeque<Wire.Frame> frames = new ArrayDeque<>();
    boolean gone;
    String why;

    ServerPeer(Wire.Conn conn, int rank, int claimedRanks, String from) {
        this.conn = conn;
        this.rank = rank;
        this.claimedRanks = claimedRanks;
        this.from = from;
    }

    /** Starts the reader thread, which hands each frame to {@code server}. */
    void startReading(RendezvousServer server) {
        Thread reader = new Thread(() -> read(server), "flexlink-rendezvous-r" + rank);
        reader.setDaemon(true);
        reader.start();
    }

    private void read(RendezvousServer server) {
        String reason;
        try {
            while (true) {
                Wire.Frame f = conn.read();
                if (f.type == Wire.DATA) {
                    if (server.queue(this, f)) {
                        continue;
                    }
                    reason = "it broke the protocol: it sent more than " + RendezvousServer.MAX_AHEAD
                            + " rounds ahead of rank 0";
                    break;
                } else if (f.type == Wire.ABORT) {
                    reason = "its communicator creation failed: " + f.text();
                    break;
                } else if (f.type == Wire.BYE) {
                    server.leftCleanly(this);
                    conn.close();
                    return;
                } else {
                    reason = "it sent an unexpected frame (type " + f.type + ")";
                    break;
                }
            }
        } catch (EOFException e) {
            reason = "its connection closed without a goodbye (process exited or was killed)";
        } catch (Wire.ProtocolException e) {
            reason = "it broke the protocol: " + e.getMessage();
        } catch (IOException e) {
            reason = "its connection failed: " + e.getMessage();
        }
        server.peerEnded(this, reason);
    }

    // ---- over a server's peers (called under the server's lock) ----

    /** The peers not gone. */
    static List<ServerPeer> alive(Collection<ServerPeer> peers) {
        List<ServerPeer> out = new ArrayList<>();
        for (ServerPeer p : peers) {
            if (!p.gone) {
                out.add(p);
            }
        }
        return out;
    }

    /** The ranks that left or whose process is gone, with why, or null. */
    static String goneRanks(Collection<ServerPeer> peers) {
        StringBuilder sb = null;
        for (ServerPeer p : peers) {
            if (p.gone) {
                sb = (sb == null ? new StringBuilder() : sb.append("; ")).append("rank ").append(p.rank)
                        .append(" is gone: ").append(p.why);
            }
        }
        return sb == null ? null : sb.toString();
    }

    /**
     * The local address of the first peer connection that came in on another address than loopback (the
     * peers' MASTER_ADDR resolved to loopback on rank 0's host only), else {@code fallback}.
     */
    static java.net.InetAddress reachedAt(Collection<ServerPeer> peers, java.net.InetAddress fallback) {
        for (ServerPeer p : peers) {
            java.net.InetAddress local = p.conn.socket.getLocalAddress();
            if (!local.isLoopbackAddress() && !local.isAnyLocalAddress()) {
                return local;
            }
        }
        return fallback;
    }

    /** The peer ranks of an {@code nranks}-rank round whose DATA has not come. */
    static List<Integer> missing(Map<Integer, ServerPeer> peers, int nranks) {
        List<Integer> out = new ArrayList<>();
        for (int r = 1; r < nranks; r++) {
            ServerPeer p = peers.get(r);
            if (p == null || p.frames.isEmpty()) {
                out.add(r);
            }
        }
        return out;
    }
}
