package io.flexlink.hier;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.runtime.RankExchange;
import java.io.DataInputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Connects the ring of a TCP rail: every rank listens on an ephemeral port of its own address, the
 * rail's exchange hands out the addresses and a random secret made by rail rank 0, then each rank
 * connects to its right neighbour and accepts its left one, which must present the secret and its rank
 * (anyone else who reaches the port is dropped). Three rounds of the exchange.
 */
final class RailConnector {
    private static final int MAGIC = 0x464C5854; // "FLXT"
    private static final int HELLO = 4 + 16 + 4 + 4;
    private static final SecureRandom RANDOM = new SecureRandom();

    /** The two connections of one rank: out to {@code rank + 1}, in from {@code rank - 1}. */
    record Links(SocketChannel out, SocketChannel in) {
    }

    private RailConnector() {
    }

    static Links connect(RankExchange exchange, int rank, int n, InetAddress address, Duration timeout) {
        byte[] mine = new byte[16];
        if (rank == 0) {
            RANDOM.nextBytes(mine);
        }
        byte[] secret = exchange.allGather(rank == 0 ? mine : new byte[0])[0];
        ServerSocketChannel listener = null;
        SocketChannel out = null;
        SocketChannel in = null;
        try {
            listener = ServerSocketChannel.open();
            listener.bind(new InetSocketAddress(address, 0), 4);
            int port = listener.socket().getLocalPort();
            byte[][] where = exchange.allGather(ByteBuffer.allocate(4 + address.getAddress().length).putInt(port)
                    .put(address.getAddress()).array());
            long deadline = System.nanoTime() + timeout.toNanos();
            out = dial(where[(rank + 1) % n], secret, rank, n, deadline);
            in = accept(listener, secret, (rank - 1 + n) % n, n, deadline);
            exchange.allGather(new byte[0]); // every link is up
            return new Links(out, in);
        } catch (IOException e) {
            close(out);
            close(in);
            throw new FlexLinkException(Result.SYSTEM_ERROR, "rail rank " + rank + "/" + n + ": cannot connect the "
                    + "ring to the neighbouring nodes: " + e.getMessage(), e);
        } catch (RuntimeException | Error e) {
            close(out);
            close(in);
            throw e;
        } finally {
            close(listener);
        }
    }

    private static SocketChannel dial(byte[] where, byte[] secret, int rank, int n, long deadline) throws IOException {
        ByteBuffer w = ByteBuffer.wrap(where);
        int port = w.getInt();
        byte[] addr = new byte[where.length - 4];
        w.get(addr);
        SocketChannel ch = SocketChannel.open();
        try {
            ch.socket().connect(new InetSocketAddress(InetAddress.getByAddress(addr), port), millisLeft(deadline));
            tune(ch);
            ByteBuffer hello = ByteBuffer.allocate(HELLO).putInt(MAGIC).put(secret).putInt(rank).putInt(n).flip();
            while (hello.hasRemaining()) {
                ch.write(hello);
            }
            return ch;
        } catch (IOException | RuntimeException e) {
            close(ch);
            throw e;
        }
    }

    /** Accepts the left neighbour, dropping connections that do not present the secret and its rank. */
    private static SocketChannel accept(ServerSocketChannel listener, byte[] secret, int left, int n, long deadline)
            throws IOException {
        while (true) {
            listener.socket().setSoTimeout(millisLeft(deadline));
            SocketChannel ch;
            try {
                ch = listener.socket().accept().getChannel();
            } catch (SocketTimeoutException e) {
                throw new IOException("rail rank " + left + " of the previous node did not connect in time", e);
            }
            try {
                ch.socket().setSoTimeout(millisLeft(deadline));
                byte[] hello = new byte[HELLO];
                new DataInputStream(ch.socket().getInputStream()).readFully(hello);
                ByteBuffer h = ByteBuffer.wrap(hello);
                byte[] theirs = new byte[16];
                boolean ok = h.getInt() == MAGIC;
                h.get(theirs);
                ok &= MessageDigest.isEqual(theirs, secret) & h.getInt() == left & h.getInt() == n;
                if (ok) {
                    ch.socket().setSoTimeout(0);
                    tune(ch);
                    return ch;
                }
            } catch (IOException e) {
                if (millisLeft(deadline) <= 1) {
                    close(ch);
                    throw e;
                }
            }
            close(ch); // not our neighbour
        }
    }

    static void tune(SocketChannel ch) throws IOException {
        ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
        ch.setOption(StandardSocketOptions.SO_KEEPALIVE, true);
    }

    static int millisLeft(long deadline) throws IOException {
        long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
        if (left <= 0) {
            throw new SocketTimeoutException("timed out");
        }
        return (int) Math.min(Integer.MAX_VALUE, left);
    }

    static void close(java.io.Closeable c) {
        if (c != null) {
            try {
                c.close();
            } catch (IOException e) {
                // closing anyway
            }
        }
    }
}
