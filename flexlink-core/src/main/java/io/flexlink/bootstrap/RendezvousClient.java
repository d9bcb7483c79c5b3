package io.flexlink.bootstrap;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.runtime.RankExchange;
import java.io.EOFException;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.NoRouteToHostException;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A peer rank's side of the TCP rendezvous: connects to rank 0 (retrying until the timeout, since rank
 * 0 may start later), presents the id's token and secret, and then sends its DATA of each round and
 * waits for the RESULT. The connection stays open for the communicator's life: a closed connection
 * without a BYE means rank 0's process is gone, and so does ABORT (rank 0's creation failed, and says
 * why); LOST from rank 0 names another rank that is gone. Once rank 0 is gone or has said BYE, every
 * pending and later round fails at once.
 */
final class RendezvousClient implements RankExchange {
    private static final Logger LOG = LoggerFactory.getLogger(RendezvousClient.class);
    private final Wire.Conn conn;
    private final int rank;
    private final int nranks;
    private final Duration timeout;
    private final String where;
    private final PeerWatch watch = new PeerWatch();
    /** Frames for the rounds; rank 0 sends one per round, so a full inbox is a broken protocol. */
    private final LinkedBlockingQueue<Wire.Frame> inbox = new LinkedBlockingQueue<>(MAX_INBOX);
    private volatile boolean closing;
    /** Why rank 0's side ended (it said BYE, failed, or its connection closed), or null while it is there. */
    private volatile String ended;
    private int round;

    private static final int MAX_INBOX = 64;
    /** How long a round whose send failed waits for what rank 0 said (the reader reads what is left, then ends). */
    private static final long SEND_FAILURE_GRACE_MS = 2000;
    /** Put in the inbox when rank 0's side ends, to wake a pending round. */
    private static final Wire.Frame ENDED = new Wire.Frame(Wire.BYE, -1, new byte[0]);

    private RendezvousClient(Wire.Conn conn, int rank, int nranks, Duration timeout, String where) {
        this.conn = conn;
        this.rank = rank;
        this.nranks = nranks;
        this.timeout = timeout;
        this.where = where;
        Thread reader = new Thread(this::read, "flexlink-rendezvous-client-r" + rank);
        reader.setDaemon(true);
        reader.start();
    }

    /** Connects and joins as {@code rank}; fails with REMOTE_ERROR when refused or when rank 0 is not there in time. */
    static RendezvousClient connect(InetSocketAddress server, String where, byte[] token, byte[] secret, int rank,
                                    int nranks, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        long backoff = TimeUnit.MILLISECONDS.toNanos(20);
        boolean redirected = false;
        while (true) { // again when the door dropped the connection before reading its HELLO (a flood)
            Socket s;
            while (true) {
                s = new Socket();
                long left = deadline - System.nanoTime();
                try {
                    s.connect(server, (int) Math.max(1, Math.min(TimeUnit.NANOSECONDS.toMillis(left), 5000)));
                    break;
                } catch (ConnectException | NoRouteToHostException | SocketTimeoutException e) {
                    closeQuietly(s);
                    left = deadline - System.nanoTime();
                    if (left <= 0) {
                        throw new FlexLinkException(Result.REMOTE_ERROR, "communicator creation timed out after "
                                + timeout.toMillis() + " ms: rank " + rank + " could not reach rank 0's rendezvous at "
                                + where + " (" + e.getMessage() + ")");
                    }
                    // rank 0 may not listen yet: retry, backing off up to 0.5 s
                    LockSupport.parkNanos(Math.min(backoff, left));
                    backoff = Math.min(backoff * 2, TimeUnit.MILLISECONDS.toNanos(500));
                } catch (IOException e) {
                    closeQuietly(s);
                    throw new FlexLinkException(Result.REMOTE_ERROR, "rank " + rank + ": cannot connect to the rendezvous at "
                            + where + ": " + e, e);
                }
            }
            try {
                s.setTcpNoDelay(true);
                s.setKeepAlive(true);
                s.setSoTimeout((int) Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
                Wire.Conn conn = new Wire.Conn(s);
                conn.send(Wire.HELLO, 0, Wire.hello(token, secret, nranks, rank));
                Wire.Frame reply = conn.read(Wire.MAX_TEXT);
                if (reply.type == Wire.RETRY) {
                    // rank 0's process serves this job but has not opened this communicator yet
                    conn.close();
                    if (deadline - System.nanoTime() <= 0) {
                        throw new FlexLinkException(Result.REMOTE_ERROR, "communicator creation timed out after "
                                + timeout.toMillis() + " ms: rank 0's process at " + where + " serves this job but "
                                + "never opened this communicator (did the processes make different numbers of "
                                + "communicators from the environment?)");
                    }
                    LockSupport.parkNanos(Math.min(backoff, Math.max(0, deadline - System.nanoTime())));
                    backoff = Math.min(backoff * 2, TimeUnit.MILLISECONDS.toNanos(500));
                    continue;
                }
                if (reply.type == Wire.REDIRECT && !redirected && reply.payload.length == 4) {
                    // a lobby: rank 0's own rendezvous listens at this port of the same address
                    conn.close();
                    redirected = true;
                    int port = java.nio.ByteBuffer.wrap(reply.payload).getInt();
                    server = new InetSocketAddress(server.getAddress(), port);
                    where = where + " -> port " + port;
                    continue;
                }
                if (reply.type == Wire.REJECT) {
                    conn.close();
                    throw new FlexLinkException(Result.REMOTE_ERROR, "rank " + rank + ": the rendezvous at " + where
                            + " refused this rank: " + reply.text());
                }
                if (reply.type != Wire.ACCEPT) {
                    conn.close();
                    throw new FlexLinkException(Result.REMOTE_ERROR, "rank " + rank + ": " + where
                            + " answered with frame type " + reply.type + ": not a FlexLink rendezvous");
                }
                s.setSoTimeout(0);
                return new RendezvousClient(conn, rank, nranks, timeout, where);
            } catch (Wire.ProtocolException e) {
                closeQuietly(s);
                throw new FlexLinkException(Result.REMOTE_ERROR, "rank " + rank + ": " + where
                        + " answered with " + e.getMessage() + "; is it rank 0's FlexLink rendezvous?", e);
            } catch (SocketTimeoutException e) {
                closeQuietly(s);
                throw new FlexLinkException(Result.REMOTE_ERROR, "communicator creation timed out after "
                        + timeout.toMillis() + " ms: the rendezvous at " + where + " did not answer rank " + rank, e);
            } catch (IOException e) {
                closeQuietly(s);
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new FlexLinkException(Result.REMOTE_ERROR, "rank " + rank + ": the rendezvous at " + where
                            + " closed the connection during the handshake: " + e, e);
                }
                LOG.debug("INIT rank {}: the rendezvous at {} closed the connection before answering ({}); "
                        + "connecting again", rank, where, e.toString());
                LockSupport.parkNanos(Math.min(backoff, left));
                backoff = Math.min(backoff * 2, TimeUnit.MILLISECONDS.toNanos(500));
            }
        }
    }

    private void read() {
        String why;
        try {
            while (true) {
                Wire.Frame f = conn.read();
                if (f.type == Wire.RESULT || f.type == Wire.ERROR || f.type == Wire.LOST) {
                    // a LOST that finds the inbox full is dropped from it (after creation nobody reads the
                    // inbox, and many ranks may be lost), never from the watch below
                    if (!inbox.offer(f) && f.type != Wire.LOST) {
                        why = "rank 0 broke the protocol: it sent " + MAX_INBOX + " frames nobody asked for";
                        break;
                    }
                    if (f.type == Wire.LOST) {
                        watch.lost(f.round, f.text());
                    }
                } else if (f.type == Wire.BYE) {
                    // a goodbye is not a loss, but no round can complete any more
                    rankZeroEnded("rank 0 ended the rendezvous at " + where + " (it closed its side: its communicator "
                            + "creation failed or it closed the communicator)");
                    conn.close();
                    return;
                } else if (f.type == Wire.ABORT) {
                    why = "its communicator creation failed: " + f.text();
                    break;
                } else {
                    why = "rank 0 sent an unexpected frame (type " + f.type + ")";
                    break;
                }
            }
        } catch (EOFException e) {
            why = "the connection to rank 0 at " + where + " closed without a goodbye (process exited or was killed)";
        } catch (Wire.ProtocolException e) {
            why = "rank 0 at " + where + " broke the protocol: " + e.getMessage();
        } catch (IOException e) {
            why = "the connection to rank 0 at " + where + " failed: " + e.getMessage();
        }
        // the reason first, then the close: a round whose send fails on the closed socket finds it
        boolean report = !closing;
        if (report) {
            rankZeroEnded("rank 0 is gone: " + why);
        }
        conn.close();
        if (report) {
            watch.lost(0, why);
        }
    }

    private void rankZeroEnded(String why) {
        if (ended == null) {
            ended = why;
        }
        inbox.offer(ENDED);
    }

    @Override
    public byte[][] allGather(byte[] mine) {
        int k = round++;
        failIfEnded(k);
        IOException lost = null;
        try {
            conn.send(Wire.DATA, k, mine);
        } catch (IOException e) {
            // rank 0's ERROR, ABORT or BYE may be unread behind the failure: the reader reads what is left and
            // always ends, so wait a little below for what rank 0 said
            lost = e;
        }
        // rank 0's own timeout runs from its own call: wait somewhat longer, so that its report, which
        // names the missing ranks, is what every rank says
        long limit = lost != null ? TimeUnit.MILLISECONDS.toNanos(SEND_FAILURE_GRACE_MS)
                : timeout.toNanos() + Math.max(timeout.toNanos() / 2, TimeUnit.MILLISECONDS.toNanos(500));
        long deadline = System.nanoTime() + limit;
        while (true) {
            Wire.Frame f;
            try {
                f = inbox.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new FlexLinkException(Result.SYSTEM_ERROR, "communicator creation interrupted");
            }
            if (f == null) {
                failIfEnded(k);
                if (lost != null) {
                    throw new FlexLinkException(Result.REMOTE_ERROR, "rank " + rank + ": lost the rendezvous at "
                            + where + " (round " + k + "): " + lost.getMessage(), lost);
                }
                throw new FlexLinkException(Result.REMOTE_ERROR, "communicator creation timed out after "
                        + TimeUnit.NANOSECONDS.toMillis(limit) + " ms: rank " + rank + " got no answer in round " + k
                        + " from rank 0 at " + where + " (rank 0 is late or waits for other ranks)");
            }
            switch (f.type) {
                case Wire.RESULT:
                    return result(f, k);
                case Wire.ERROR:
                    throw new FlexLinkException(Result.REMOTE_ERROR, f.text());
                case Wire.LOST:
                    throw new FlexLinkException(Result.REMOTE_ERROR, "communicator creation failed in round " + k
                            + ": rank " + f.round + " is gone: " + f.text());
                default: // ENDED
                    failIfEnded(k);
            }
        }
    }

    private void failIfEnded(int k) {
        String why = ended;
        if (why != null) {
            throw new FlexLinkException(Result.REMOTE_ERROR, "communicator creation failed in round " + k
                    + " on rank " + rank + ": " + why);
        }
    }

    private byte[][] result(Wire.Frame f, int k) {
        try {
            if (f.round != k) {
                throw new IOException("a result of round " + f.round + ", expected round " + k);
            }
            return Wire.unpackAll(f.payload, nranks);
        } catch (IOException e) {
            throw new FlexLinkException(Result.INTERNAL_ERROR, "rank " + rank + ": bad answer from rank 0 at " + where
                    + ": " + e.getMessage(), e);
        }
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

    @Override
    public void close() {
        leave(Wire.BYE, "");
    }

    /** Tells rank 0 why this rank's creation failed (it fails the round for the others), and closes. */
    @Override
    public void fail(Throwable cause) {
        leave(Wire.ABORT, Wire.describe(cause));
    }

    private synchronized void leave(int type, String why) {
        if (closing) {
            return;
        }
        closing = true;
        // a round of this rank still waiting (another thread) ends now rather than at its timeout
        if (ended == null) {
            ended = "rank " + rank + " left the rendezvous at " + where + " (its creation failed or it closed)";
        }
        conn.trySend(type, round, why);
        conn.close();
        inbox.offer(ENDED);
    }

    /** The address of this end of the connection to rank 0: one of this host's addresses that rank 0 reaches. */
    java.net.InetAddress localAddress() {
        return conn.socket.getLocalAddress();
    }

    /**
     * Called by a process whose bind of the rendezvous port failed: asks whoever listens there whether it
     * is rank 0 of this same job (then two jobs share the port, and both must fail). Returns the answer of
     * a FlexLink rendezvous, or null when the port does not answer like one.
     */
    static String claimRankZero(InetSocketAddress server, byte[] token, byte[] secret, int nranks) {
        try (Socket s = new Socket()) {
            s.connect(server, 2000);
            s.setSoTimeout(5000);
            Wire.Conn c = new Wire.Conn(s);
            c.send(Wire.HELLO, 0, Wire.hello(token, secret, nranks, 0));
            Wire.Frame reply = c.read(Wire.MAX_TEXT);
            return reply.type == Wire.REJECT || reply.type == Wire.RETRY ? reply.text() : null;
        } catch (IOException e) {
            return null;
        }
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException e) {
            // closing anyway
        }
    }

    @Override
    public String toString() {
        return "RendezvousClient[rank " + rank + " -> " + where + "]";
    }
}
