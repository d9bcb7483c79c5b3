package io.flexlink.bootstrap;

import java.io.IOException;
import java.net.Socket;
import java.nio.channels.SocketChannel;

/**
 * The checks of a complete HELLO at rank 0's rendezvous, in order: a FlexLink client of this protocol
 * version, the right secret, the right communicator (token); then a claim of rank 0, or of a rank that
 * joined already, is a collision of two jobs ({@link PeerAdmission#collide}); a world size other than
 * rank 0's is refused saying so; anything else joins.
 */
final class PeerAdmission {
    private PeerAdmission() {
    }

    static void admit(RendezvousServer server, SocketChannel ch, byte[] hello, String from) throws IOException {
        Socket s = ch.socket();
        Wire.Conn conn = new Wire.Conn(s);
        Wire.Hello h = Wire.Hello.parse(hello);
        if (h == null) {
            server.refuse(conn, from, -1, "not a FlexLink rendezvous client");
            return;
        }
        from = from + " (pid " + h.pid() + ")";
        int rank = h.rank();
        if (h.version() != Wire.VERSION) {
            server.refuse(conn, from, rank, "protocol version " + h.version() + ", rank 0 speaks " + Wire.VERSION);
        } else if (!server.secretIs(h.secret())) {
            server.refuse(conn, from, rank, "wrong secret");
        } else if (!server.tokenIs(h.token())) {
            server.refuse(conn, from, rank, "it joins another communicator (different unique id or job)");
        } else if (rank == 0) {
            collide(server, conn, from, 0, "another process (" + from + ") claims rank 0 of this communicator: its "
                    + "rendezvous port is taken by this one");
        } else {
            Object refusal = server.add(conn, s, from, h.nranks(), rank);
            if (refusal instanceof Duplicate d) {
                collide(server, conn, from, rank, "another process (" + from + ") claims rank " + rank
                        + ", which joined from " + d.from());
            } else if (refusal != null) {
                server.refuse(conn, from, rank, (String) refusal);
            }
        }
    }

    /** Refuses the intruder of a collision of two jobs, and ends {@code server}'s communicator on every rank. */
    static void collide(RendezvousServer server, Wire.Conn conn, String from, int rank, String what) {
        String where = server.where();
        server.refuse(conn, from, rank, "collision: rank 0 of this job's communicator runs in process "
                + ProcessHandle.current().pid() + " at " + where + ", which stops it now: two jobs share the port "
                + "with the same job id (give each job its own MASTER_PORT or FLEXLINK_JOB_ID)");
        server.collided(rank, what + "; two jobs share the rendezvous at " + where + " with the same job id, and "
                + "this communicator stops on every rank (give each job its own MASTER_PORT or FLEXLINK_JOB_ID)");
    }

    /** Where the rank that a newcomer claims joined from. */
    record Duplicate(String from) {
    }

    static String worldSizes(int claimed, int n) {
        return "the world sizes differ: it has " + claimed + " ranks (WORLD_SIZE), rank 0 has " + n;
    }
}
