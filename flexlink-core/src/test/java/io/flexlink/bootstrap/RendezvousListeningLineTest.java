package io.flexlink.bootstrap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Every rendezvous listener (a rank 0's own, the port a job's communicators share, the unique-id lobby)
 * goes through a {@link RendezvousDoor}, and the door says once, at creation, the address and port its
 * socket is bound to: the line operators read to check MASTER_ADDR (logged at INFO in production).
 */
class RendezvousListeningLineTest {
    private static final Duration HELLO = Duration.ofSeconds(5);

    /** Admits nothing: closes each connection and counts it, so the test knows the door has seen it. */
    private static final class Closing implements Admission {
        final String where;
        final CountDownLatch seen = new CountDownLatch(1);

        Closing(String where) {
            this.where = where;
        }

        @Override
        public void admit(SocketChannel ch, byte[] hello, String from) throws IOException {
            ch.close();
            seen.countDown();
        }

        @Override
        public void noteRefusal(String from, int rank, String why) {
            seen.countDown();
        }

        @Override
        public String where() {
            return where;
        }
    }

    @Test
    void theDoorSaysOnceWhereItsSocketIsBoundBeforeAcceptingAnything() throws Exception {
        List<String> lines = new CopyOnWriteArrayList<>();
        ServerSocketChannel listener = ServerSocketChannel.open();
        listener.bind(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), 0));
        int port = listener.socket().getLocalPort();
        Closing server = new Closing("127.0.0.1:" + port);
        try (RendezvousDoor door = new RendezvousDoor(listener, server, HELLO, lines::add)) {
            assertEquals(List.of("INIT rendezvous listening on 127.0.0.1:" + port), lines);
            try (Socket s = new Socket(InetAddress.getByName("127.0.0.1"), port)) {
                byte[] junk = new byte[Wire.HEADER_BYTES];
                Arrays.fill(junk, (byte) 0x7f);
                s.getOutputStream().write(junk); // no HELLO header: refused at once
                s.getOutputStream().flush();
                assertTrue(server.seen.await(30, TimeUnit.SECONDS), "the door saw the connection");
            }
            assertEquals(1, lines.size(), "one line per listener, not per connection: " + lines);
        }
    }

    @Test
    void aListenerOnEveryInterfaceNamesTheBindAndWherePeersConnect() throws Exception {
        List<String> lines = new CopyOnWriteArrayList<>();
        ServerSocketChannel listener = ServerSocketChannel.open();
        listener.bind(new InetSocketAddress(InetAddress.getByName("0.0.0.0"), 0));
        int port = listener.socket().getLocalPort();
        try (RendezvousDoor door = new RendezvousDoor(listener, new Closing("10.0.0.5:29500"), HELLO, lines::add)) {
            assertEquals(List.of("INIT rendezvous listening on *:" + port
                    + " (every interface) (peers connect to 10.0.0.5:29500)"),
                    lines, "the socket's own address, not the advertised one");
        }
    }
}
