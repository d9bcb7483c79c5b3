package io.flexlink.runtime.shm;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.runtime.NativeMemory;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.EnumSet;
import java.util.HexFormat;

/**
 * Memory that the processes of one machine share through a file in a tmpfs directory ({@code /dev/shm}).
 * The creator makes the file with O_EXCL and mode 0600 under a fresh name
 * {@code flexlink-<uid>-<pid>-<random hex>}, writes zeros over all of it so that a /dev/shm too small
 * fails here with ENOSPC (a mapping of pages tmpfs cannot supply would fault later, with SIGBUS), then
 * maps it. Peers map it by {@link #name()}, which comes from another process: {@link #open} maps only a
 * regular {@code flexlink-} file of this user directly inside the shm directory, never through a link.
 * The creator {@link #unlink}s the name once every peer has mapped it (the pages live until the last
 * mapping goes), so a crash afterwards leaves nothing behind; {@link ShmSweep} removes files of crashed
 * processes that died before that point.
 */
public final class ShmSegment implements AutoCloseable {
    /** What the name of shared memory that lives in a file starts with. */
    public static final String NAME_PREFIX = "shm:";
    /** What every file name starts with. */
    public static final String FILE_PREFIX = "flexlink-";
    private static final long PAGE = 4096;
    private static final long MAX_BYTES = Integer.MAX_VALUE - PAGE; // one MappedByteBuffer
    private static final ByteBuffer ZEROS = ByteBuffer.allocateDirect(1 << 20);
    private static final SecureRandom RANDOM = new SecureRandom();

    private final Path file;
    private final long byteSize;
    private final long mappedBytes;
    private final boolean owner;
    private final long address;
    private MappedByteBuffer buffer;
    private boolean linked;

    /** The bytes a directory has free for this user; a seam, so tests can play a small /dev/shm. */
    @FunctionalInterface
    interface SpaceProbe {
        long usableBytes(Path dir) throws IOException;
    }

    /** Writes {@code size} zero bytes over a fresh file; a seam, so tests can play a /dev/shm that fills up. */
    @FunctionalInterface
    interface ZeroFill {
        void fill(FileChannel ch, long size) throws IOException;
    }

    static final SpaceProbe FILE_STORE = dir -> Files.getFileStore(dir).getUsableSpace();

    private ShmSegment(Path file, long byteSize, MappedByteBuffer buffer, boolean owner) {
        this.file = file;
        this.byteSize = byteSize;
        this.mappedBytes = buffer.capacity();
        this.buffer = buffer;
        this.owner = owner;
        this.linked = owner;
        this.address = NativeMemory.address(buffer);
    }

    /** True when {@code name} names memory in a file (made by {@link #create}). */
    public static boolean isName(String name) {
        return name != null && name.startsWith(NAME_PREFIX);
    }

    /** Creates and maps a zero-filled file of at least {@code bytes} bytes in {@code dir}. */
    public static ShmSegment create(Path dir, long bytes) {
        return create(dir, bytes, FILE_STORE, ShmSegment::zeroFill);
    }

    static ShmSegment create(Path dir, long bytes, SpaceProbe space, ZeroFill fill) {
        if (bytes < 0 || bytes > MAX_BYTES) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "shared memory: " + bytes + " bytes is more than one "
                    + "area may have (" + MAX_BYTES + "); lower flexlink.chunkBytes or flexlink.slots");
        }
        long size = Math.max(PAGE, (bytes + PAGE - 1) / PAGE * PAGE);
        if (!Files.isDirectory(dir)) {
            throw new FlexLinkException(Result.SYSTEM_ERROR, "shared memory: directory " + dir
                    + " does not exist (set flexlink.shm.dir / FLEXLINK_SHM_DIR to a tmpfs directory)");
        }
        long usable = usableSpace(space, dir);
        if (usable >= 0 && usable < size) {
            throw tooSmall(dir, size, usable, null);
        }
        byte[] id = new byte[8];
        RANDOM.nextBytes(id);
        Path file = dir.resolve(FILE_PREFIX + ShmSweep.uid() + "-" + ProcessHandle.current().pid() + "-"
                + HexFormat.of().formatHex(id));
        boolean created = false;
        try (FileChannel ch = FileChannel.open(file, EnumSet.of(StandardOpenOption.CREATE_NEW,
                StandardOpenOption.READ, StandardOpenOption.WRITE),
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")))) {
            created = true;
            try {
                fill.fill(ch, size);
            } catch (IOException e) {
                // judged before the file goes: its pages still count as used
                long written = ch.size();
                long free = usableSpace(space, dir);
                if (outOfSpace(e, size - written, free)) {
                    deleteQuietly(file);
                    created = false;
                    throw tooSmall(dir, size, free < 0 ? -1 : free + written, e);
                }
                throw e;
            }
            return new ShmSegment(file, bytes, ch.map(FileChannel.MapMode.READ_WRITE, 0, size), true);
        } catch (IOException | UnsupportedOperationException e) {
            if (created) {
                deleteQuietly(file);
            }
            if (e instanceof FileAlreadyExistsException) {
                throw new FlexLinkException(Result.SYSTEM_ERROR, "shared memory: " + file + " already exists", e);
            }
            throw new FlexLinkException(Result.SYSTEM_ERROR, "shared memory: cannot create " + file + " ("
                    + size + " bytes): " + e, e);
        }
    }

    /**
     * Maps the file named {@code name} (from {@link #create} in another process) in {@code dir}, this
     * rank's shm directory; it must hold {@code bytes}. The name comes from another process, so the file
     * must be a {@code flexlink-} file directly inside {@code dir}, a regular file and no symbolic link,
     * owned by this user.
     */
    public static ShmSegment open(Path dir, String name, long bytes) {
        return open(dir, name, bytes, ShmSweep.uid());
    }

    /** {@link #open(Path, String, long)} for files owned by {@code owner} (a numeric uid, or a user name). */
    static ShmSegment open(Path dir, String name, long bytes, String owner) {
        Path file = ShmFileCheck.inDirectory(dir, name);
        Object key = ShmFileCheck.regularAndOwned(file, owner).fileKey();
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE,
                LinkOption.NOFOLLOW_LINKS)) {
            // what was opened is what was checked (not a file swapped in meanwhile)
            Object opened = ShmFileCheck.regularAndOwned(file, owner).fileKey();
            if (key != null && !key.equals(opened)) {
                throw new FlexLinkException(Result.SYSTEM_ERROR, "shared memory " + file
                        + " was replaced while this rank opened it: refused");
            }
            long size = ch.size();
            if (size < bytes) {
                throw new FlexLinkException(Result.INTERNAL_ERROR,
                        "shared memory " + file + " has " + size + " bytes, expected " + bytes);
            }
            return new ShmSegment(file, bytes, ch.map(FileChannel.MapMode.READ_WRITE, 0, size), false);
        } catch (NoSuchFileException e) {
            throw ShmFileCheck.missing(file, e);
        } catch (IOException e) {
            throw new FlexLinkException(Result.SYSTEM_ERROR, "shared memory: cannot map " + file + ": " + e, e);
        }
    }

    /** Writing (not just sizing) makes tmpfs allocate every page now, so ENOSPC is an IOException here. */
    private static void zeroFill(FileChannel ch, long size) throws IOException {
        for (long pos = 0; pos < size; ) {
            ByteBuffer z = ZEROS.duplicate();
            z.limit((int) Math.min(z.capacity(), size - pos));
            pos += ch.write(z, pos);
        }
    }

    /**
     * True when a failed write ran out of space: the directory now has less room than was still to be
     * written (Java gives ENOSPC no type of its own); else, where the room is unknown, by the message.
     */
    static boolean outOfSpace(IOException e, long stillToWrite, long usableNow) {
        if (usableNow >= 0) {
            return usableNow < stillToWrite;
        }
        return String.valueOf(e.getMessage()).contains("No space left");
    }

    private static FlexLinkException tooSmall(Path dir, long size, long usable, Throwable cause) {
        return new FlexLinkException(Result.SYSTEM_ERROR, "shared memory: " + dir + " has "
                + (usable < 0 ? "fewer" : String.valueOf(usable)) + " bytes free " + (usable < 0 ? "than" : "but")
                + " a staging area needs " + size + ": enlarge it (docker --shm-size, or mount a larger tmpfs and "
                + "set FLEXLINK_SHM_DIR), or lower flexlink.chunkBytes or flexlink.slots", cause);
    }

    private static long usableSpace(SpaceProbe space, Path dir) {
        try {
            return space.usableBytes(dir);
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /** {@code shm:} and the file's path: what peers pass to {@link #open}. */
    public String name() {
        return NAME_PREFIX + file;
    }

    /** The file. */
    public Path file() {
        return file;
    }

    /** The address of the mapping in this process (page-aligned). */
    public long address() {
        return address;
    }

    /** Bytes asked for. */
    public long byteSize() {
        return byteSize;
    }

    /** Bytes mapped: {@link #byteSize()} rounded up to whole pages. */
    public long mappedBytes() {
        return mappedBytes;
    }

    /** Removes the file's name (creator only; idempotent); mappings stay valid. */
    public synchronized void unlink() {
        if (linked) {
            linked = false;
            deleteQuietly(file);
        }
    }

    /** Unmaps (the address is invalid afterwards) and, for the creator, removes the name if still there. */
    @Override
    public synchronized void close() {
        unlink();
        if (buffer != null) {
            MappedByteBuffer b = buffer;
            buffer = null;
            NativeMemory.UNSAFE.invokeCleaner(b);
        }
    }

    private static void deleteQuietly(Path file) {
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            // the sweep of a later run removes it
        }
    }

    @Override
    public String toString() {
        return "ShmSegment[" + file + ", " + byteSize + " B" + (linked ? "" : ", unlinked") + "]";
    }
}
