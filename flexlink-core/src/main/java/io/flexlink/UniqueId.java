package io.flexlink;

import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Base64;

/**
 * The identity of a communicator being created, shared by its ranks before creation (like
 * {@code ncclUniqueId}: 128 bytes). It carries a random token naming the rendezvous, a random secret
 * that peers must present, and the rendezvous address of rank 0 (IPv4 or IPv6 and port) for ranks in
 * other processes. Layout: magic "FLXL", version, flags, port (2), token (8), secret (16), address
 * length (1), address (up to 16), zero padding. The flags say who listens at the address: rank 0's
 * rendezvous, bound by the process that made the id (0); a lobby that sends every rank on to rank 0's
 * own rendezvous, wherever rank 0 runs ({@link #LOBBY}); or nobody until rank 0 binds it in
 * {@code initRank} ({@link #RANK0_BINDS}, a fixed address such as {@code FLEXLINK_COMM_ID}'s).
 */
public final class UniqueId {
    /** Size in bytes, the same as NCCL's unique id. */
    public static final int BYTES = 128;
    private static final int MAGIC = 0x464C584C; // "FLXL"
    private static final byte VERSION = 1;
    private static final SecureRandom RANDOM = new SecureRandom();
    /** Flag: the address is a lobby that tells each rank where rank 0's rendezvous is. */
    public static final int LOBBY = 1;
    /** Flag: rank 0 binds the address itself when it joins (nobody listens there before). */
    public static final int RANK0_BINDS = 2;

    private final byte[] bytes;

    private UniqueId(byte[] bytes) {
        this.bytes = bytes;
    }

    /** A new id with a fresh token and secret and no network address (ranks in this process only). */
    public static UniqueId random() {
        return withAddress(null, 0);
    }

    /** A new id whose rendezvous is at {@code address}:{@code port} (raw IPv4/IPv6 bytes; null for none). */
    public static UniqueId withAddress(byte[] address, int port) {
        return withAddress(address, port, 0);
    }

    /** {@link #withAddress(byte[], int)} with {@link #flags()} ({@link #LOBBY} or {@link #RANK0_BINDS}). */
    public static UniqueId withAddress(byte[] address, int port, int flags) {
        if (flags != 0 && flags != LOBBY && flags != RANK0_BINDS) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "flags: " + flags + " (0, LOBBY or RANK0_BINDS)");
        }
        if (flags != 0 && address == null) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "address: null with flags " + flags);
        }
        byte[] token = new byte[8];
        byte[] secret = new byte[16];
        RANDOM.nextBytes(token);
        RANDOM.nextBytes(secret);
        UniqueId id = of(address, port, token, secret);
        id.bytes[5] = (byte) flags;
        return id;
    }

    /**
     * An id with a given token (8 bytes) and secret (16 bytes), for launchers whose processes derive the
     * same id independently (torchrun's environment) instead of passing one around.
     */
    public static UniqueId of(byte[] address, int port, byte[] token, byte[] secret) {
        if (token == null || token.length != 8 || secret == null || secret.length != 16) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "uniqueId: token must be 8 bytes and secret 16");
        }
        if (port < 0 || port > 0xffff) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "port: " + port + " is not in [0, 65535]");
        }
        ByteBuffer b = ByteBuffer.allocate(BYTES);
        b.putInt(MAGIC).put(VERSION).put((byte) 0).putShort((short) port);
        b.put(token).put(secret);
        if (address == null) {
            b.put((byte) 0);
        } else {
            if (address.length != 4 && address.length != 16) {
                throw new FlexLinkException(Result.INVALID_ARGUMENT, "address: must be 4 or 16 bytes");
            }
            b.put((byte) address.length).put(address);
        }
        return new UniqueId(b.array());
    }

    /** Reads an id from its 128 bytes. */
    public static UniqueId fromBytes(byte[] bytes) {
        if (bytes == null || bytes.length != BYTES) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT,
                    "uniqueId: expected " + BYTES + " bytes, got " + (bytes == null ? "null" : bytes.length));
        }
        ByteBuffer b = ByteBuffer.wrap(bytes);
        if (b.getInt() != MAGIC || b.get() != VERSION) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "uniqueId: not a FlexLink unique id (bad magic or version)");
        }
        int len = bytes[32] & 0xff;
        if (len != 0 && len != 4 && len != 16) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "uniqueId: corrupt address length " + len);
        }
        int flags = bytes[5];
        if (flags != 0 && flags != LOBBY && flags != RANK0_BINDS || flags != 0 && len == 0) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "uniqueId: corrupt flags " + flags);
        }
        return new UniqueId(bytes.clone());
    }

    /** Reads an id from {@link #toBase64()}. */
    public static UniqueId fromBase64(String text) {
        if (text == null) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "uniqueId: null");
        }
        try {
            return fromBytes(Base64.getDecoder().decode(text.trim()));
        } catch (IllegalArgumentException e) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "uniqueId: not Base64: " + e.getMessage());
        }
    }

    /** The 128 bytes. */
    public byte[] toBytes() {
        return bytes.clone();
    }

    public String toBase64() {
        return Base64.getEncoder().encodeToString(bytes);
    }

    /** The rendezvous token as a hex string (names the in-process rendezvous; safe to log). */
    public String token() {
        StringBuilder sb = new StringBuilder();
        for (int i = 8; i < 16; i++) {
            sb.append(String.format("%02x", bytes[i]));
        }
        return sb.toString();
    }

    /** The raw 8 token bytes. */
    public byte[] tokenBytes() {
        return Arrays.copyOfRange(bytes, 8, 16);
    }

    /** The secret peers must present. */
    public byte[] secret() {
        return Arrays.copyOfRange(bytes, 16, 32);
    }

    /** Rank 0's rendezvous address bytes, or null when the id is for one process only. */
    public byte[] address() {
        int len = bytes[32] & 0xff;
        return len == 0 ? null : Arrays.copyOfRange(bytes, 33, 33 + len);
    }

    /** 0, {@link #LOBBY} or {@link #RANK0_BINDS}: who listens at {@link #address()}. */
    public int flags() {
        return bytes[5];
    }

    /** Rank 0's rendezvous port (0 when none). */
    public int port() {
        return ((bytes[6] & 0xff) << 8) | (bytes[7] & 0xff);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof UniqueId && Arrays.equals(bytes, ((UniqueId) o).bytes);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(bytes);
    }

    @Override
    public String toString() {
        return "UniqueId[" + token() + "]";
    }
}
