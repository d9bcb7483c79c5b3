package io.flexlink.bootstrap;

import io.flexlink.FlexLinkException;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The frames of the TCP rendezvous: {@code type, round, length, payload}, big-endian. A client says
 * HELLO (a frame of exactly {@link #HELLO_FRAME} bytes) and gets ACCEPT or REJECT; then each all-gather
 * round is one DATA from every client and one RESULT (every rank's bytes) or ERROR from rank 0; LOST
 * tells a client that another rank is gone; BYE ends a connection cleanly; ABORT ends it because the
 * sender's communicator creation failed, saying why. RETRY answers a HELLO of this job for a
 * communicator rank 0's process has not opened yet (its port serves the job's earlier ones): the client
 * connects again later. REDIRECT answers a HELLO at the lobby of an id ({@link RendezvousLobby}): its
 * payload is the port of rank 0's rendezvous at the same address; rank 0 itself sends it to the lobby to
 * say where it listens.
 */
final class Wire {
    static final int MAGIC = 0x464C5852; // "FLXR"
    /**
     * 2: ABORT added; 3: RETRY added, rank 0's HELLO (a second process claiming rank 0) is a collision;
     * 4: REDIRECT added (lobbies).
     */
    static final int VERSION = 4;
    static final int HELLO = 1;
    static final int ACCEPT = 2;
    static final int REJECT = 3;
    static final int DATA = 4;
    static final int RESULT = 5;
    static final int ERROR = 6;
    static final int LOST = 7;
    static final int BYE = 8;
    static final int ABORT = 9;
    static final int RETRY = 10;
    static final int REDIRECT = 11;
    static final int HEADER_BYTES = 12;
    /** HELLO's payload: magic, version, token (8), secret (16), ranks, rank, pid. */
    static final int HELLO_PAYLOAD = 4 + 4 + 8 + 16 + 4 + 4 + 8;
    static final int HELLO_FRAME = HEADER_BYTES + HELLO_PAYLOAD;
    /** Bigger frames from an admitted peer are garbage (or an attack), not rendezvous traffic. */
    static final int MAX_PAYLOAD = 64 << 20;
    /** Bound of a handshake answer (ACCEPT is empty, REJECT a sentence) and of an error text sent. */
    static final int MAX_TEXT = 4096;

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

    /** A frame that breaks the protocol (as opposed to a connection that failed). */
    static final class ProtocolException extends IOException {
        private static final long serialVersionUID = 1L;

        ProtocolException(String message) {
            super(message);
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

        /** Reads a frame of at most {@link #MAX_PAYLOAD} bytes of payload. */
        Frame read() throws IOException {
            return read(MAX_PAYLOAD);
        }

        /** Reads a frame; a declared length above {@code maxPayload} is refused before anything is allocated. */
        Frame read(int maxPayload) throws IOException {
            int type = in.readInt();
            int round = in.readInt();
            int len = in.readInt();
            if (len < 0 || len > maxPayload) {
                throw new ProtocolException("a frame (type " + type + ") declares " + (len & 0xFFFFFFFFL)
                        + " bytes, more than the " + maxPayload + " allowed: not FlexLink rendezvous traffic of this "
                        + "version");
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

    /** HELLO's payload: magic, version, token (8), secret (16), ranks, rank, pid. */
    static byte[] hello(byte[] token, byte[] secret, int nranks, int rank) {
        return ByteBuffer.allocate(HELLO_PAYLOAD).putInt(MAGIC).putInt(VERSION).put(token).put(secret)
                .putInt(nranks).putInt(rank).putLong(ProcessHandle.current().pid()).array();
    }

    /** True when the first {@link #HEADER_BYTES} of a connection can begin a HELLO. */
    static boolean helloHeader(ByteBuffer header) {
        return header.getInt(0) == HELLO && header.getInt(4) == 0 && header.getInt(8) == HELLO_PAYLOAD;
    }

    /** A HELLO's fields. */
    record Hello(int version, byte[] token, byte[] secret, int nranks, int rank, long pid) {
        /** Parses a whole HELLO frame ({@link #HELLO_FRAME} bytes), or null when it is not one. */
        static Hello parse(byte[] frame) {
            ByteBuffer b = ByteBuffer.wrap(frame);
            if (frame.length != HELLO_FRAME || !helloHeader(b) || b.getInt(HEADER_BYTES) != MAGIC) {
                return null;
            }
            b.position(HEADER_BYTES + 4);
            int version = b.getInt();
            byte[] token = new byte[8];
            byte[] secret = new byte[16];
            b.get(token).get(secret);
            return new Hello(version, token, secret, b.getInt(), b.getInt(), b.getLong());
        }
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

    /** Unpacks a RESULT of {@code nranks} contributions; every count is checked before it is allocated. */
    static byte[][] unpackAll(byte[] packed, int nranks) throws IOException {
        ByteBuffer buf = ByteBuffer.wrap(packed);
        if (buf.remaining() < 4) {
            throw new ProtocolException("a result frame of " + packed.length + " bytes");
        }
        int count = buf.getInt();
        if (count != nranks) {
            throw new ProtocolException("a result of " + (count & 0xFFFFFFFFL) + " ranks, expected " + nranks);
        }
        byte[][] all = new byte[count][];
        for (int i = 0; i < count; i++) {
            int len = buf.remaining() >= 4 ? buf.getInt() : -1;
            if (len < 0 || len > buf.remaining()) {
                throw new ProtocolException("a result whose rank " + i + " declares " + (len & 0xFFFFFFFFL)
                        + " bytes where " + buf.remaining() + " remain");
            }
            all[i] = new byte[len];
            buf.get(all[i]);
        }
        if (buf.hasRemaining()) {
            throw new ProtocolException("a result with " + buf.remaining() + " bytes after its last rank");
        }
        return all;
    }

    /** What a failure says to the peers: its NCCL code and message, bounded. */
    static String describe(Throwable cause) {
        String text = cause instanceof FlexLinkException ? cause.getMessage()
                : cause.getClass().getSimpleName() + (cause.getMessage() == null ? "" : ": " + cause.getMessage());
        return text.length() <= 1000 ? text : text.substring(0, 1000) + "...";
    }
}
