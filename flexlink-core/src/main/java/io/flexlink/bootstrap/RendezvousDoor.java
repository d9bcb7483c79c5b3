package io.flexlink.bootstrap;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The door of rank 0's rendezvous: accepts connections and collects each one's HELLO before anyone
 * trusts it. A HELLO is exactly {@link Wire#HELLO_FRAME} bytes and must arrive whole within one deadline
 * (not per read); a connection whose first bytes cannot begin a HELLO is refused at once. The HELLOs are
 * read by one selector thread, not by the accepting thread nor a thread per connection, so a silent,
 * slow or foreign client holds {@link Wire#HELLO_FRAME} bytes and one slot among
 * {@link #MAX_WAITING} until its deadline, and never keeps a real rank out: beyond that many, the
 * connection that has waited longest is dropped. A complete HELLO goes to {@link Admission#admit} (a
 * rendezvous, or a port shared by a job's communicators), which checks the secret.
 */
final class RendezvousDoor implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(RendezvousDoor.class);
    /** Pause after a failed accept (file descriptors exhausted, say) before accepting again. */
    private static final long ACCEPT_BACKOFF_NANOS = 50_000_000L;
    /** Connections allowed to be saying HELLO at once (a job's ranks connect once each). */
    static final int MAX_WAITING = 128;

    private final ServerSocketChannel listener;
    private final Admission server;
    private final long helloNanos;
    private final Selector selector;
    private final ConcurrentLinkedQueue<SocketChannel> accepted = new ConcurrentLinkedQueue<>();
    /** In arrival order, so the first is the one whose deadline comes first; door thread only. */
    private final LinkedHashSet<Waiting> waiting = new LinkedHashSet<>();
    private volatile boolean closed;

    /** A connection saying HELLO. */
    private static final class Waiting {
        final SocketChannel channel;
        final String from;
        final long deadline;
        final ByteBuffer hello = ByteBuffer.allocate(Wire.HELLO_FRAME);
        SelectionKey key;

        Waiting(SocketChannel channel, String from, long deadline) {
            this.channel = channel;
            this.from = from;
            this.deadline = deadline;
        }
    }

    RendezvousDoor(ServerSocketChannel listener, Admission server, Duration helloTimeout) throws IOException {
        this(listener, server, helloTimeout, LOG::info);
    }

    /**
     * A door that tells {@code announce} once, before it accepts anything, the address and port the
     * listener is bound to (operators check it against MASTER_ADDR; the socket's own answer, not what was
     * asked for), and where peers are told to connect when that differs (a bind to every interface).
     */
    RendezvousDoor(ServerSocketChannel listener, Admission server, Duration helloTimeout, Consumer<String> announce)
            throws IOException {
        String line = listening(listener, server.where()); // before the selector, which a failure here would leak
        this.listener = listener;
        this.server = server;
        this.helloNanos = helloTimeout.toNanos();
        this.selector = Selector.open();
        int port = listener.socket().getLocalPort();
        announce.accept(line);
        start(this::acceptLoop, "flexlink-rendezvous-accept-" + port);
        start(this::helloLoop, "flexlink-rendezvous-hello-" + port);
    }

    /** "INIT rendezvous listening on 10.0.0.5:29500", plus "(peers connect to …)" where that differs. */
    static String listening(ServerSocketChannel listener, String advertised) throws IOException {
        InetSocketAddress bound = (InetSocketAddress) listener.getLocalAddress();
        String host = bound.getAddress().getHostAddress();
        // a dual-stack JVM reports a bind to 0.0.0.0 as [::]; either way it is every interface, said plainly
        String at = bound.getAddress().isAnyLocalAddress() ? "*:" + bound.getPort() + " (every interface)"
                : (host.contains(":") ? "[" + host + "]" : host) + ":" + bound.getPort();
        return "INIT rendezvous listening on " + at + (at.equals(advertised) ? "" : " (peers connect to " + advertised
                + ")");
    }

    private static void start(Runnable body, String name) {
        Thread t = new Thread(body, name);
        t.setDaemon(true);
        t.start();
    }

    /** Stops listening (the port is free when this returns) and drops connections still saying HELLO. */
    @Override
    public void close() {
        closed = true;
        closeQuietly(listener);
        selector.wakeup();
    }

    boolean isClosed() {
        return closed;
    }

    private void acceptLoop() {
        try {
            while (!closed) {
                SocketChannel ch;
                try {
                    ch = listener.accept();
                } catch (IOException e) {
                    if (closed || !listener.isOpen()) {
                        return; // closed: every rank joined, or the exchange closed
                    }
                    // out of file descriptors under a flood, say: the door stays open for the real ranks
                    LOG.warn("INIT rendezvous: accept failed ({}); accepting again shortly", e.toString());
                    java.util.concurrent.locks.LockSupport.parkNanos(ACCEPT_BACKOFF_NANOS);
                    continue;
                }
                accepted.add(ch);
                selector.wakeup();
                if (closed) { // the HELLO thread may have finished already
                    for (SocketChannel late; (late = accepted.poll()) != null; ) {
                        closeQuietly(late);
                    }
                }
            }
        } finally {
            close();
        }
    }

    private void helloLoop() {
        try {
            while (!closed) {
                long now = System.nanoTime();
                takeAccepted(now);
                dropExpired(now);
                Waiting first = waiting.isEmpty() ? null : waiting.iterator().next();
                selector.select(first == null ? 0 : Math.max(1, TimeUnit.NANOSECONDS.toMillis(first.deadline - now)));
                List<Waiting> complete = readHellos();
                if (!complete.isEmpty()) {
                    selector.selectNow(); // deregisters their keys, so the channels may block again
                    for (Waiting w : complete) {
                        handOver(w);
                    }
                }
            }
        } catch (IOException | ClosedSelectorException e) {
            LOG.warn("INIT rendezvous {}: stops listening: {}", server.where(), e.toString());
        } finally {
            close();
            for (Waiting w : waiting) {
                refuse(w, "the rendezvous closed (every rank joined, or rank 0 ended it)");
            }
            waiting.clear();
            for (SocketChannel ch; (ch = accepted.poll()) != null; ) {
                closeQuietly(ch);
            }
            closeQuietly(selector);
        }
    }

    private void takeAccepted(long now) {
        for (SocketChannel ch; (ch = accepted.poll()) != null; ) {
            Waiting w = null;
            try {
                ch.configureBlocking(false);
                ch.socket().setTcpNoDelay(true);
                w = new Waiting(ch, String.valueOf(ch.getRemoteAddress()), now + helloNanos);
                w.key = ch.register(selector, SelectionKey.OP_READ, w);
            } catch (IOException e) {
                closeQuietly(ch);
                continue;
            }
            if (waiting.size() >= MAX_WAITING) {
                Waiting oldest = waiting.iterator().next();
                waiting.remove(oldest);
                drop(oldest, "dropped: " + MAX_WAITING + " newer connections are saying HELLO");
            }
            waiting.add(w);
        }
    }

    private void dropExpired(long now) {
        for (Iterator<Waiting> it = waiting.iterator(); it.hasNext(); ) {
            Waiting w = it.next();
            if (w.deadline - now > 0) {
                break; // the others came later
            }
            it.remove();
            drop(w, "no whole HELLO within " + TimeUnit.NANOSECONDS.toMillis(helloNanos) + " ms ("
                    + w.hello.position() + " of " + Wire.HELLO_FRAME + " bytes)");
        }
    }

    /** Reads what arrived; returns the connections whose HELLO is complete, their keys cancelled. */
    private List<Waiting> readHellos() {
        List<Waiting> complete = new ArrayList<>();
        for (Iterator<SelectionKey> it = selector.selectedKeys().iterator(); it.hasNext(); ) {
            Waiting w = (Waiting) it.next().attachment();
            it.remove();
            int before = w.hello.position();
            int n;
            try {
                n = w.channel.read(w.hello);
            } catch (IOException e) {
                n = -1;
            }
            if (n < 0) {
                waiting.remove(w);
                drop(w, "closed after " + w.hello.position() + " bytes of a HELLO");
            } else if (before < Wire.HEADER_BYTES && w.hello.position() >= Wire.HEADER_BYTES
                    && !Wire.helloHeader(w.hello)) {
                waiting.remove(w);
                refuse(w, "not a FlexLink rendezvous client (its first bytes are no HELLO of protocol version "
                        + Wire.VERSION + ")");
            } else if (!w.hello.hasRemaining()) {
                waiting.remove(w);
                w.key.cancel();
                complete.add(w);
            }
        }
        return complete;
    }

    private void handOver(Waiting w) {
        try {
            w.channel.configureBlocking(true);
            server.admit(w.channel, w.hello.array(), w.from);
        } catch (IOException | RuntimeException e) {
            LOG.debug("INIT rendezvous {}: handshake with {} failed: {}", server.where(), w.from, e.toString());
            closeQuietly(w.channel);
        }
    }

    /** Closes a connection without an answer (it never said enough to deserve one). */
    private void drop(Waiting w, String why) {
        server.noteRefusal(w.from, -1, why);
        closeQuietly(w.channel);
    }

    /** Answers REJECT without blocking (best effort) and closes. */
    private void refuse(Waiting w, String why) {
        server.noteRefusal(w.from, -1, why);
        byte[] text = why.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        ByteBuffer frame = ByteBuffer.allocate(Wire.HEADER_BYTES + text.length).putInt(Wire.REJECT).putInt(0)
                .putInt(text.length).put(text).flip();
        try {
            if (!w.channel.isBlocking()) {
                w.channel.write(frame);
            }
        } catch (IOException e) {
            // it is gone anyway
        }
        closeQuietly(w.channel);
    }

    private static void closeQuietly(java.io.Closeable c) {
        try {
            c.close();
        } catch (IOException e) {
            // closing anyway
        }
    }
}
