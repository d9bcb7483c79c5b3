package io.flexlink.hier;

import io.flexlink.runtime.PinnedMemory;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The two threads behind a {@link NetChannel}: the sender writes each filled send slot to the right
 * neighbour's socket (a header of sequence number and length, then the bytes) and empties the slot; the
 * receiver reads each chunk from the left neighbour's socket into a free receive slot, paces it like the
 * emulated rail link, and fills the slot. They wait for the stream's counters by polling (backing off to
 * {@link #MAX_POLL_NANOS}), and the sender sleeps while nothing is enqueued. Closing sends what is
 * enqueued, then a goodbye (a header of -1, -1); a receiver that reads the goodbye with no chunk still
 * expected ends quietly. A connection closed without it, a goodbye while chunks are still expected, or a
 * chunk out of sequence ends both threads and reports the failure once. A rail's threads start at once on
 * its ring's connections; a peer link's ({@link TcpPeers}) sender first dials the peer on its own thread, and
 * its receiver starts when the peer's connection is accepted, so that no caller waits for the network.
 */
final class NetProxy {
    private static final Logger LOG = LoggerFactory.getLogger(NetProxy.class);
    static final long MAX_POLL_NANOS = TimeUnit.MICROSECONDS.toNanos(200);
    private static final int HEADER = 8;

    private final NetChannel channel;
    /** For messages: {@code rail}, the next node and the previous one; or a peer link and its peer, twice. */
    private final String kind;
    private final String to;
    private final String from;
    /** Set once connected (a rail's at once; a peer link's when its dial or its peer's dial is done). */
    private volatile SocketChannel out;
    private volatile SocketChannel in;
    private final RailPacer pacer;
    private final Runnable onFailure;
    private final Thread sender;
    private final Thread receiver;
    /** Chunks the stream side has enqueued for sending, and for receiving. */
    private volatile long sendTarget;
    private volatile long receiveTarget;
    /** Set by {@link #drain}: the sender says goodbye once every enqueued chunk is sent. */
    private volatile boolean goodbye;
    private volatile boolean saidGoodbye;
    /** The receiver read the left neighbour's goodbye. */
    private volatile boolean heardGoodbye;
    private volatile long sentChunks;
    private volatile long receivedChunks;
    /**
     * Payload bytes read from the socket (headers not counted), by the receiver thread alone, before it
     * raises the slot's full counter: a stream that consumed a chunk sees them counted.
     */
    private volatile long receivedBytes;
    private volatile boolean stopping;
    private volatile String failure;

    /** Where the sender's connection comes from: at once (a rail's), or a dial on the sender's own thread. */
    interface Dial {
        SocketChannel connect() throws IOException;
    }

    private volatile Dial dial;

    NetProxy(NetChannel channel, RailPacer pacer, String name, String kind, String to, String from,
             Runnable onFailure) {
        this.channel = channel;
        this.kind = kind;
        this.to = to;
        this.from = from;
        this.pacer = pacer;
        this.onFailure = onFailure;
        this.sender = new Thread(this::sendLoop, name + "-send");
        this.receiver = new Thread(this::receiveLoop, name + "-recv");
        sender.setDaemon(true);
        receiver.setDaemon(true);
    }

    /**
     * Starts the sender; {@code how} runs on its thread, so that a caller enqueueing the first transfer to a
     * peer never waits for the network (the stream waits for the slots instead). Once only.
     */
    synchronized void startSending(Dial how) {
        dial = how;
        sender.start();
    }

    /** Starts the receiver on {@code from}; closed at once when stopped meanwhile. Once only. */
    synchronized void startReceiving(SocketChannel from) {
        in = from;
        if (stopping) {
            closeQuietly(from);
            return;
        }
        receiver.start();
    }

    void sendEnqueued(long total) {
        sendTarget = total;
        LockSupport.unpark(sender);
    }

    void receiveEnqueued(long total) {
        receiveTarget = total;
        LockSupport.unpark(receiver); // a slot may have been emptied: look again at once
    }

    private void sendLoop() {
        PinnedMemory c = channel.counters();
        int slots = channel.slots();
        // the socket writes from a buffer of the proxy's own; the slot is the backend's memory
        ByteBuffer bounce = ByteBuffer.allocateDirect(channel.chunkBytes());
        ByteBuffer header = ByteBuffer.allocateDirect(HEADER);
        ByteBuffer[] frame = new ByteBuffer[2];
        try {
            SocketChannel o = dial.connect();
            synchronized (this) {
                out = o;
                if (stopping) {
                    closeQuietly(o);
                    return;
                }
            }
            for (long a = 0; !stopping; a++) {
                while (sendTarget <= a && !stopping) {
                    if (goodbye) {
                        sayGoodbye(header);
                        return;
                    }
                    LockSupport.park(this); // nothing enqueued yet
                }
                int s = (int) (a % slots);
                int use = (int) (a / slots + 1);
                if (!await(c, channel.sendFull(s), use)) {
                    return;
                }
                int len = c.readCounter(channel.sendLength(s));
                header.clear();
                header.putInt((int) a).putInt(len).flip();
                frame[0] = header;
                channel.readSendSlot(s, bounce, len);
                frame[1] = bounce;
                while (frame[0].hasRemaining() || frame[1].hasRemaining()) {
                    out.write(frame);
                }
                sentChunks = a + 1;
                c.writeCounter(channel.sendEmpty(s), use);
            }
        } catch (IOException e) {
            failed("sending to " + to + " failed: " + e.getMessage());
        }
    }

    /** Everything enqueued went out: a goodbye, which a neighbour that closed first no longer needs. */
    private void sayGoodbye(ByteBuffer header) {
        header.clear();
        header.putInt(-1).putInt(-1).flip();
        try {
            while (header.hasRemaining()) {
                out.write(header);
            }
        } catch (IOException e) {
            // the next node closed its rail first: it had everything
        }
        saidGoodbye = true;
    }

    private void receiveLoop() {
        PinnedMemory c = channel.counters();
        int slots = channel.slots();
        ByteBuffer header = ByteBuffer.allocateDirect(HEADER);
        ByteBuffer bounce = ByteBuffer.allocateDirect(channel.chunkBytes());
        long got = 0;
        try {
            for (long b = 0; !stopping; b++) {
                header.clear();
                readFully(header);
                header.flip();
                int seq = header.getInt();
                int len = header.getInt();
                if (seq == -1 && len == -1) {
                    heardGoodbye = true;
                    if (receiveTarget > b) {
                        failed(from + " closed its " + kind + " while this node waits for " + (receiveTarget - b)
                                + " more chunks (the nodes made different calls)");
                    }
                    return;
                }
                if (seq != (int) b || len < 0 || len > channel.chunkBytes()) {
                    failed(from + " sent chunk " + seq + " of " + len + " bytes where chunk " + (int) b
                            + " of at most " + channel.chunkBytes() + " was due (the nodes made different calls)");
                    return;
                }
                int s = (int) (b % slots);
                int use = (int) (b / slots + 1);
                if (!await(c, channel.recvEmpty(s), use - 1)) {
                    return;
                }
                long start = System.nanoTime();
                bounce.clear().limit(len);
                readFully(bounce);
                channel.writeRecvSlot(s, bounce, len);
                pacer.paced(start, len);
                receivedChunks = b + 1;
                got += len;
                receivedBytes = got; // one writer: a plain store publishes it
                c.writeCounter(channel.recvFull(s), use);
            }
        } catch (EOFException e) {
            failed(from + " closed its connection (its process exited or was killed)");
        } catch (IOException e) {
            failed("receiving from " + from + " failed: " + e.getMessage());
        }
    }

    private void readFully(ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            if (in.read(b) < 0) {
                throw new EOFException();
            }
        }
    }

    /** Polls until the counter reaches {@code value} (wrap-safe ≥); false when stopped. */
    private boolean await(PinnedMemory c, long offset, int value) {
        long pause = 1_000;
        while (c.readCounter(offset) - value < 0) {
            if (stopping) {
                return false;
            }
            LockSupport.parkNanos(this, pause);
            pause = Math.min(2 * pause, MAX_POLL_NANOS);
        }
        return !stopping;
    }

    private void failed(String why) {
        if (stopping) {
            return; // closed or aborted on purpose: the sockets were closed under the threads
        }
        synchronized (this) {
            if (failure != null) {
                return;
            }
            failure = why;
        }
        LOG.warn("COLL {}: {}", kind, why);
        onFailure.run();
    }

    long receivedBytes() {
        return receivedBytes;
    }

    String failure() {
        return failure;
    }

    /** Where the links stand against what the stream side enqueued. */
    String describe(long enqueuedSends, long enqueuedReceives) {
        return "sent " + sentChunks + " of " + enqueuedSends + " chunks to " + to + ", received " + receivedChunks
                + " of " + enqueuedReceives + " from " + from;
    }

    /**
     * Waits (until {@code deadline}) for every enqueued chunk to be sent, and for the goodbye to go out;
     * true when it did. The streams are done with this channel by then.
     */
    boolean drain(long deadline) {
        goodbye = true;
        if (!sender.isAlive() && out == null) {
            return true; // never started: nothing was sent, nobody waits for a goodbye
        }
        LockSupport.unpark(sender);
        long pause = 1_000;
        while (!saidGoodbye && failure == null && !stopping && System.nanoTime() - deadline < 0) {
            LockSupport.parkNanos(this, pause);
            pause = Math.min(2 * pause, MAX_POLL_NANOS);
        }
        return saidGoodbye;
    }

    /** Ends both threads (closing the sockets unblocks them); idempotent. */
    void stop() {
        synchronized (this) {
            stopping = true;
        }
        closeQuietly(out);
        closeQuietly(in);
        LockSupport.unpark(sender);
        LockSupport.unpark(receiver);
    }

    /** {@link #stop()}, then waits up to {@code millis} for both threads to end; true when they did. */
    boolean stopAndJoin(long millis) {
        stop();
        try {
            sender.join(millis);
            receiver.join(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return !sender.isAlive() && !receiver.isAlive();
    }

    private static void closeQuietly(SocketChannel ch) {
        if (ch == null) {
            return; // never connected
        }
        try {
            ch.close();
        } catch (IOException e) {
            // closing anyway
        }
    }
}
