package io.flexlink.bootstrap;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The frames of the TCP rendezvous: {@code type, round, length, payload}, big-endian. A client says
 * HELLO and gets ACCEPT or REJECT; then each all-gather round is one DATA from every client and one
 * RESULT (every rank's bytes) or ERROR from rank 0; LOST tells a client that another rank is gone; BYE
 * ends a connection cleanly.
 */
final class Wire {
    static final int MAGIC = 0x464C5852; // "FLXR"
    static final int VERSION = 1;
    static final int HELLO = 1;
    static final int ACCEPT = 2;
    static final int REJECT = 3;
    static final int DATA = 4;
    static final int RESULT = 5;
    static final int ERROR = 6;
    static final int LOST = 7;
    static final int BYE = 8;
    /** Bigger frames are garbage (or an attack), not rendezvous traffic. */
    static final int MAX_PAYLOAD = 64 << 20;

    private Wire() {
    }

    static final class Frame {
        final int type;
        final int round;
        final byte[] payload;

        Frame(int type, int round, byte[] payload) {
            this.type = type;
            this.round = round;
            this.payload = payload;
        }

        String text() {
            return new String(payload, StandardCharsets.UTF_8);
        }
    }

    /** One end of a connection: a socket with its streams; writes are serialized. */
    static final class Conn {
        final Socket socket;
        private final DataInputStream in;
        private final DataOutputStream out;

        Conn(Socket socket) throws IOException {
            this.socket = socket;
            this.in = new DataInputStream(new java.io.BufferedInputStream(socket.getInputStream()));
            this.out = new DataOutputStream(new java.io.BufferedOutputStream(socket.getOutputStream()));
        }

        synchronized void send(int type, int round, byte[] payload) throws IOException {
            out.writeInt(type);
            out.writeInt(round);
            out.writeInt(payload.length);
            out.write(payload);
            out.flush();
        }

        void send(int type, int round, String text) throws IOException {
            send(type, round, text.getBytes(StandardCharsets.UTF_8));
        }

        /** Sends without failing: for goodbyes and error reports to a peer that may be gone. */
        void trySend(int type, int round, String text) {
            try {
                send(type, round, text);
            } catch (IOException e) {
                // the peer is gone; its reader notices
            }
        }

        Frame read() throws IOException {
            int type = in.readInt();
            int round = in.readInt();
            int len = in.readInt();
            if (len < 0 || len > MAX_PAYLOAD) {
                throw new IOException("bad frame length " + len);
            }
            byte[] p = new byte[len];
            in.readFully(p);
            return new Frame(type, round, p);
        }

        void close() {
            try {
                socket.close();
            } catch (IOException e) {
                // closing anyway
            }
        }
    }

    /** HELLO: magic, version, token (8), secret (16), ranks, rank, pid. */
    static byte[] hello(byte[] token, byte[] secret, int nranks, int rank) {
        return ByteBuffer.allocate(4 + 4 + 8 + 16 + 4 + 4 + 8).putInt(MAGIC).putInt(VERSION).put(token).put(secret)
                .putInt(nranks).putInt(rank).putLong(ProcessHandle.current().pid()).array();
    }

    /** RESULT: count, then length and bytes of each rank's contribution. */
    static byte[] packAll(byte[][] all) {
        int size = 4;
        for (byte[] b : all) {
            size += 4 + b.length;
        }
        ByteBuffer buf = ByteBuffer.allocate(size).putInt(all.length);
        for (byte[] b : all) {
            buf.putInt(b.length).put(b);
        }
        return buf.array();
    }

    static byte[][] unpackAll(byte[] packed) throws IOException {
        try {
            ByteBuffer buf = ByteBuffer.wrap(packed);
            byte[][] all = new byte[buf.getInt()][];
            for (int i = 0; i < all.length; i++) {
                all[i] = new byte[buf.getInt()];
                buf.get(all[i]);
            }
            return all;
        } catch (RuntimeException e) {
            throw new IOException("corrupt result frame: " + e);
        }
    }
}
