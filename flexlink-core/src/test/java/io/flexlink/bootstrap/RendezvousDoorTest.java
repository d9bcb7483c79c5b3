package io.flexlink.bootstrap;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.UniqueId;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.RankExchange;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Clients that are not ranks (silent, trickling, huge, foreign) cannot keep the real ranks out of rank
 * 0's rendezvous, nor make either side allocate what a frame merely declares; an admitted peer that
 * breaks the protocol is named in a clear error.
 */
class RendezvousDoorTest {
    private static final FlexLinkConfig CONFIG = FlexLinkConfig.builder().build();
    private static final Duration TIMEOUT = Duration.ofSeconds(20);
    private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();
    private final ExecutorService pool = Executors.newCachedThreadPool();
    private final List<Socket> sockets = new ArrayList<>();
    private final AtomicBoolean stop = new AtomicBoolean();

    @AfterEach
    void stop() throws IOException {
        stop.set(true);
        pool.shutdownNow();
        for (Socket s : sockets) {
            s.close();
        }
    }

    private Socket connect(int port) throws IOException {
        Socket s = new Socket(LOOPBACK, port);
        sockets.add(s);
        s.setSoTimeout((int) TIMEOUT.toMillis());
        return s;
    }

    /** Sends {@code first}, then one zero byte every {@code millis} until the test ends or the server hangs up. */
    private void trickle(Socket s, byte[] first, long millis) throws IOException {
        OutputStream out = s.getOutputStream();
        out.write(first);
        out.flush();
        pool.submit(() -> {
            try {
                while (!stop.get()) {
                    out.write(0);
                    out.flush();
                    Thread.sleep(millis); // the pace of a slow client, not synchronization
                }
            } catch (IOException | InterruptedException e) {
                // hung up on, or the test ended
            }
            return null;
        });
    }

    private static byte[] header(int type, int round, int length) {
        return java.nio.ByteBuffer.allocate(12).putInt(type).putInt(round).putInt(length).array();
    }

    /** Every rank joins and completes two rounds, in well under the timeout. */
    private void realRanksMeet(UniqueId id, int n) throws Exception {
        List<Future<RankExchange>> joins = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            int rank = r;
            joins.add(pool.submit(() -> TcpRendezvous.join(id, n, rank, TIMEOUT)));
        }
        List<RankExchange> ex = new ArrayList<>();
        for (Future<RankExchange> f : joins) {
            ex.add(f.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS));
        }
        for (int k = 0; k < 2; k++) {
            List<Future<byte[][]>> round = new ArrayList<>();
            for (int r = 0; r < n; r++) {
                RankExchange e = ex.get(r);
                byte[] mine = {(byte) r, (byte) k};
                round.add(pool.submit(() -> e.allGather(mine)));
            }
            for (Future<byte[][]> f : round) {
                byte[][] all = f.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
                for (int r = 0; r < n; r++) {
                    assertArrayEquals(new byte[] {(byte) r, (byte) k}, all[r]);
                }
            }
        }
        ex.forEach(RankExchange::close);
    }

    /** What the server answers before hanging up: a REJECT's text, or null when it just closes. */
    private static String answer(Socket s) throws IOException {
        DataInputStream in = new DataInputStream(s.getInputStream());
        try {
            int type = in.readInt();
            in.readInt();
            byte[] text = new byte[in.readInt()];
            in.readFully(text);
            assertEquals(Wire.REJECT, type);
            assertEquals(-1, in.read(), "then it hangs up");
            return new String(text, StandardCharsets.UTF_8);
        } catch (EOFException | SocketException e) {
            return null;
        }
    }

    @Test
    void hostileClientsCannotKeepTheRanksOut() throws Exception {
        UniqueId id = TcpRendezvous.listen(LOOPBACK, 0, CONFIG);
        // connected before the ranks, so a single accept thread would take them first
        Socket huge = connect(id.port());
        trickle(huge, header(Wire.HELLO, 0, 60 << 20), 1000); // declares 60 MiB, then trickles it
        Socket slow = connect(id.port());
        trickle(slow, header(Wire.HELLO, 0, Wire.HELLO_PAYLOAD), 1000); // a HELLO that takes its time
        Socket silent = connect(id.port());
        Socket http = connect(id.port());
        http.getOutputStream().write("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        realRanksMeet(id, 3);
        assertTrue(answer(huge).contains("not a FlexLink rendezvous client"));
        assertTrue(answer(http).contains("not a FlexLink rendezvous client"));
    }

    @Test
    void aHelloMustBeWholeWithinItsDeadlineNotPerRead() throws Exception {
        UniqueId id = TcpRendezvous.listen(LOOPBACK, 0, CONFIG, Duration.ofMillis(500));
        Socket slow = connect(id.port());
        // a byte every 100 ms: each read comes quickly, the whole HELLO takes 4.8 s or more
        trickle(slow, header(Wire.HELLO, 0, Wire.HELLO_PAYLOAD), 100);
        Socket silent = connect(id.port());
        assertEquals(null, answer(slow), "dropped at the deadline, while still sending");
        assertEquals(null, answer(silent));
        TcpRendezvous.cancel(id);
    }

    @Test
    void manySilentConnectionsCannotFillTheDoor() throws Exception {
        UniqueId id = TcpRendezvous.listen(LOOPBACK, 0, CONFIG);
        for (int i = 0; i < RendezvousDoor.MAX_WAITING + 20; i++) {
            connect(id.port());
        }
        realRanksMeet(id, 3);
        // the ones that waited longest were dropped to make room
        assertEquals(null, answer(sockets.get(0)));
    }

    @Test
    void anAdmittedPeerDeclaringAHugeFrameIsNamed() throws Exception {
        UniqueId id = TcpRendezvous.listen(LOOPBACK, 0, CONFIG);
        Socket peer = admittedPeer(id, 2);
        RankExchange zero = TcpRendezvous.join(id, 2, 0, TIMEOUT);
        peer.getOutputStream().write(header(Wire.DATA, 0, 1 << 30));
        String m = roundFails(zero);
        assertTrue(m.contains("rank 1 is gone: it broke the protocol: a frame (type 4) declares 1073741824 bytes, "
                + "more than the " + Wire.MAX_PAYLOAD + " allowed"), m);
        zero.close();
    }

    @Test
    void anAdmittedPeerRunningRoundsAheadIsNamed() throws Exception {
        UniqueId id = TcpRendezvous.listen(LOOPBACK, 0, CONFIG);
        Socket peer = admittedPeer(id, 2);
        RankExchange zero = TcpRendezvous.join(id, 2, 0, TIMEOUT);
        DataOutputStream out = new DataOutputStream(peer.getOutputStream());
        for (int k = 0; k <= RendezvousServer.MAX_AHEAD; k++) {
            out.write(header(Wire.DATA, k, 1));
            out.write(k);
        }
        out.flush();
        assertEquals(-1, peer.getInputStream().read(), "rank 0 hangs up on it");
        String m = roundFails(zero);
        assertTrue(m.contains("rank 1 is gone: it broke the protocol: it sent more than " + RendezvousServer.MAX_AHEAD
                + " rounds ahead"), m);
        zero.close();
    }

    /** A raw connection that says a right HELLO for rank 1 of {@code n} and is accepted. */
    private Socket admittedPeer(UniqueId id, int n) throws IOException {
        Socket s = connect(id.port());
        DataOutputStream out = new DataOutputStream(s.getOutputStream());
        out.write(header(Wire.HELLO, 0, Wire.HELLO_PAYLOAD));
        out.write(Wire.hello(id.tokenBytes(), id.secret(), n, 1));
        out.flush();
        DataInputStream in = new DataInputStream(s.getInputStream());
        assertEquals(Wire.ACCEPT, in.readInt());
        assertEquals(0, in.readInt());
        assertEquals(0, in.readInt());
        return s;
    }

    private String roundFails(RankExchange ex) {
        ExecutionException e = assertThrows(ExecutionException.class,
                () -> pool.submit(() -> ex.allGather(new byte[0])).get(TIMEOUT.toMillis() / 2, TimeUnit.MILLISECONDS));
        FlexLinkException f = assertInstanceOf(FlexLinkException.class, e.getCause());
        assertEquals(Result.REMOTE_ERROR, f.result());
        return f.getMessage();
    }

    // ---- a client facing a rank 0 that is not what it should be ----

    /** A fake rank 0 that accepts one client, takes its HELLO and DATA, and answers {@code answer}. */
    private Future<?> fakeRankZero(ServerSocket server, byte[] handshakeAnswer, byte[] roundAnswer) {
        return pool.submit(() -> {
            try (Socket s = server.accept()) {
                DataInputStream in = new DataInputStream(s.getInputStream());
                in.readFully(new byte[Wire.HELLO_FRAME]);
                OutputStream out = s.getOutputStream();
                out.write(handshakeAnswer);
                out.flush();
                in.readInt();
                in.readInt();
                in.readFully(new byte[in.readInt()]);
                out.write(roundAnswer);
                out.flush();
                in.read(); // until the client hangs up
            }
            return null;
        });
    }

    private RankExchange connectTo(ServerSocket server) {
        UniqueId id = UniqueId.withAddress(LOOPBACK.getAddress(), server.getLocalPort());
        return RendezvousClient.connect(new java.net.InetSocketAddress(LOOPBACK, server.getLocalPort()), "fake",
                id.tokenBytes(), id.secret(), 1, 2, TIMEOUT);
    }

    @Test
    void aClientChecksAResultsRankCountBeforeAllocating() throws Exception {
        try (ServerSocket server = new ServerSocket(0, 1, LOOPBACK)) {
            byte[] result = java.nio.ByteBuffer.allocate(16).putInt(Wire.RESULT).putInt(0).putInt(4)
                    .putInt(1_000_000_000).array();
            fakeRankZero(server, header(Wire.ACCEPT, 0, 0), result);
            RankExchange one = connectTo(server);
            FlexLinkException e = assertThrows(FlexLinkException.class, () -> one.allGather(new byte[] {1}));
            assertEquals(Result.INTERNAL_ERROR, e.result());
            assertTrue(e.getMessage().contains("a result of 1000000000 ranks, expected 2"), e.getMessage());
            one.close();
        }
    }

    @Test
    void aClientRefusesAHugeHandshakeAnswer() throws Exception {
        try (ServerSocket server = new ServerSocket(0, 1, LOOPBACK)) {
            fakeRankZero(server, header(Wire.ACCEPT, 0, 10 << 20), new byte[0]);
            FlexLinkException e = assertThrows(FlexLinkException.class, () -> connectTo(server));
            assertEquals(Result.REMOTE_ERROR, e.result());
            assertTrue(e.getMessage().contains("declares 10485760 bytes"), e.getMessage());
        }
    }
}
