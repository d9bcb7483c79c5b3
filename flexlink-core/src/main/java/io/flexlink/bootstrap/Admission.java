package io.flexlink.bootstrap;

import java.io.IOException;
import java.nio.channels.SocketChannel;

/**
 * Who decides about a connection whose HELLO a {@link RendezvousDoor} has read: one rendezvous
 * ({@link RendezvousServer}), or a port that serves several communicators of one job ({@link SharedPort}).
 */
interface Admission {
    /** Checks a complete HELLO (on the door's thread; {@code ch} blocks) and admits or refuses its sender. */
    void admit(SocketChannel ch, byte[] hello, String from) throws IOException;

    /** Notes a connection refused before its HELLO was whole ({@code rank} -1). */
    void noteRefusal(String from, int rank, String why);

    /** The address and port, for logs. */
    String where();
}
