package io.flexlink.cuda;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * On-disk cache of compiled kernel images (cubin or PTX), one file per key. Pure Java, no CUDA.
 *
 * <p>File layout: magic {@code FLKC}, format version (int), payload length (long), SHA-256 of the
 * payload (32 bytes), payload. Files are written to a temp file in the same directory and renamed
 * with {@code ATOMIC_MOVE}, so concurrent processes never see half a file; a file that is short,
 * has a wrong header or a wrong checksum (a crash before the data reached the disk, a foreign file)
 * is ignored, deleted and rebuilt. The cache is an optimization: I/O failures are logged, never
 * thrown.
 */
final class KernelCache {
    private static final Logger LOG = LoggerFactory.getLogger(KernelCache.class);

    private static final int MAGIC = 0x464C4B43; // "FLKC"
    private static final int FORMAT = 1;
    private static final int HEADER_BYTES = 4 + 4 + 8 + 32;
    /** Guard against reading a huge foreign file into memory; real cubins are well under 64 MB. */
    static final long MAX_IMAGE_BYTES = 256L << 20;
    private static final Pattern KEY = Pattern.compile("[0-9a-f]{64}");
    private static final String SUFFIX = ".kimg";

    private final Path dir;

    KernelCache(Path dir) {
        this.dir = Objects.requireNonNull(dir, "dir");
    }

    /** {@code ${user.home}/.cache/flexlink/kernels}. */
    static Path defaultDirectory() {
        return Path.of(System.getProperty("user.home"), ".cache", "flexlink", "kernels");
    }

    Path directory() {
        return dir;
    }

    /**
     * The cache key: SHA-256 hex over the source, the target architecture, the compiler version and
     * the options in order (each length-prefixed, so no two inputs collide by concatenation).
     */
    static String key(String source, String arch, String compilerVersion, List<String> options) {
        MessageDigest md = sha256();
        update(md, "flexlink-kernel-v1");
        update(md, source);
        update(md, arch);
        update(md, compilerVersion);
        update(md, Integer.toString(options.size()));
        for (String o : options) {
            update(md, o);
        }
        return HexFormat.of().formatHex(md.digest());
    }

    Path fileFor(String key) {
        if (!KEY.matcher(key).matches()) {
            throw new IllegalArgumentException("not a cache key: " + key);
        }
        return dir.resolve(key + SUFFIX);
    }

    /** The cached image for {@code key}, or empty when absent or unusable (an unusable file is deleted). */
    Optional<byte[]> read(String key) {
        Path file = fileFor(key);
        byte[] all;
        try {
            long size = Files.size(file);
            if (size > MAX_IMAGE_BYTES + HEADER_BYTES) {
                return discard(file, "too large (" + size + " bytes)");
            }
            all = Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            return Optional.empty();
        } catch (IOException e) {
            LOG.debug("kernel cache: cannot read {}: {}", file, e.toString());
            return Optional.empty();
        }
        if (all.length < HEADER_BYTES) {
            return discard(file, "short file (" + all.length + " bytes)");
        }
        ByteBuffer b = ByteBuffer.wrap(all);
        if (b.getInt() != MAGIC || b.getInt() != FORMAT) {
            return discard(file, "bad header");
        }
        long length = b.getLong();
        if (length != all.length - HEADER_BYTES) {
            return discard(file, "length " + length + " but " + (all.length - HEADER_BYTES) + " bytes present");
        }
        byte[] digest = new byte[32];
        b.get(digest);
        byte[] payload = Arrays.copyOfRange(all, HEADER_BYTES, all.length);
        if (!MessageDigest.isEqual(digest, sha256().digest(payload))) {
            return discard(file, "checksum mismatch");
        }
        return Optional.of(payload);
    }

    /** Stores {@code image} under {@code key} atomically; returns false (and logs) when it could not. */
    boolean write(String key, byte[] image) {
        Path file = fileFor(key);
        if (image.length > MAX_IMAGE_BYTES) {
            LOG.warn("kernel cache: image of {} bytes not cached (limit {})", image.length, MAX_IMAGE_BYTES);
            return false;
        }
        Path tmp = null;
        try {
            Files.createDirectories(dir);
            tmp = Files.createTempFile(dir, key.substring(0, 16) + ".", ".tmp");
            ByteBuffer header = ByteBuffer.allocate(HEADER_BYTES);
            header.putInt(MAGIC).putInt(FORMAT).putLong(image.length).put(sha256().digest(image)).flip();
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
                writeFully(ch, header);
                writeFully(ch, ByteBuffer.wrap(image));
                ch.force(true);
            }
            Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            tmp = null;
            LOG.debug("kernel cache: stored {} ({} bytes)", file, image.length);
            return true;
        } catch (AtomicMoveNotSupportedException e) {
            LOG.warn("kernel cache: {} does not support atomic rename; not caching", dir);
            return false;
        } catch (IOException | SecurityException e) {
            LOG.warn("kernel cache: cannot write {}: {}", file, e.toString());
            return false;
        } finally {
            if (tmp != null) {
                try {
                    Files.deleteIfExists(tmp);
                } catch (IOException ignored) {
                    // best effort: a stray .tmp file is harmless and never read
                }
            }
        }
    }

    private static void writeFully(FileChannel ch, ByteBuffer buf) throws IOException {
        while (buf.hasRemaining()) {
            ch.write(buf);
        }
    }

    private static Optional<byte[]> discard(Path file, String why) {
        LOG.warn("kernel cache: ignoring {} ({}); it will be rebuilt", file, why);
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            LOG.debug("kernel cache: cannot delete {}: {}", file, e.toString());
        }
        return Optional.empty();
    }

    private static void update(MessageDigest md, String s) {
        byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
        md.update(ByteBuffer.allocate(8).putLong(bytes.length).array());
        md.update(bytes);
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required by every Java platform", e);
        }
    }
}
