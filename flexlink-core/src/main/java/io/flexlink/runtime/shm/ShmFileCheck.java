package io.flexlink.runtime.shm;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;

/**
 * The checks a shared-memory name from another process passes before it is mapped: it names a
 * {@code flexlink-} file directly inside this rank's shm directory (no other directory, no {@code ..}),
 * which is a regular file, not a symbolic link, owned by this user. A peer (or whoever speaks for one)
 * could otherwise make this process map, and write into, any file it may open.
 */
final class ShmFileCheck {
    private ShmFileCheck() {
    }

    /** The file that {@code name} ({@code shm:<path>}) names, when it lies directly inside {@code dir}. */
    static Path inDirectory(Path dir, String name) {
        if (!ShmSegment.isName(name)) {
            throw new FlexLinkException(Result.INTERNAL_ERROR, "shared memory: '" + name + "' is not a file name");
        }
        Path file;
        try {
            file = Path.of(name.substring(ShmSegment.NAME_PREFIX.length()));
        } catch (InvalidPathException e) {
            throw new FlexLinkException(Result.INTERNAL_ERROR, "shared memory: '" + name + "' is not a path", e);
        }
        Path fileName = file.getFileName();
        if (fileName == null || !fileName.toString().startsWith(ShmSegment.FILE_PREFIX)) {
            throw new FlexLinkException(Result.INTERNAL_ERROR, "shared memory: '" + name + "' is not a FlexLink file");
        }
        Path parent = file.getParent();
        if (!file.normalize().equals(file) || parent == null || !sameDirectory(parent, dir)) {
            throw new FlexLinkException(Result.INVALID_USAGE, "shared memory: '" + name + "' is not a file directly "
                    + "inside this rank's shm directory " + dir + ": refused (every rank must use the same "
                    + "flexlink.shm.dir / FLEXLINK_SHM_DIR)");
        }
        return dir.resolve(fileName.toString());
    }

    /** The attributes of {@code file}, when it is a regular file (not a link) owned by {@code owner}. */
    static BasicFileAttributes regularAndOwned(Path file, String owner) {
        BasicFileAttributes a;
        try {
            a = Files.readAttributes(file, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
            throw missing(file, e);
        } catch (IOException e) {
            throw new FlexLinkException(Result.SYSTEM_ERROR, "shared memory: cannot inspect " + file + ": " + e, e);
        }
        if (a.isSymbolicLink()) {
            throw new FlexLinkException(Result.SYSTEM_ERROR, "shared memory " + file + " is a symbolic link: refused "
                    + "(FlexLink maps only the regular files it creates)");
        }
        if (!a.isRegularFile()) {
            throw new FlexLinkException(Result.SYSTEM_ERROR, "shared memory " + file + " is not a regular file: "
                    + "refused");
        }
        String actual = ownerOf(file, owner.chars().allMatch(Character::isDigit));
        if (!owner.equals(actual)) {
            throw new FlexLinkException(Result.SYSTEM_ERROR, "shared memory " + file + " belongs to user " + actual
                    + ", not to this process's user " + owner + ": refused (every rank must run as the same user)");
        }
        return a;
    }

    static FlexLinkException missing(Path file, Exception cause) {
        return new FlexLinkException(Result.SYSTEM_ERROR, "shared memory " + file + " does not exist here: every "
                + "rank must run on the same machine and see the same " + file.getParent()
                + " (containers: share the IPC namespace or mount the same tmpfs)", cause);
    }

    /** The numeric uid of {@code file}'s owner (as {@link ShmSweep#uid()} is, where it can be), or the owner's name. */
    private static String ownerOf(Path file, boolean numeric) {
        try {
            if (numeric) {
                try {
                    return String.valueOf(Files.getAttribute(file, "unix:uid", LinkOption.NOFOLLOW_LINKS));
                } catch (UnsupportedOperationException | IllegalArgumentException e) {
                    // no unix attributes here: the name must do
                }
            }
            return Files.getOwner(file, LinkOption.NOFOLLOW_LINKS).getName();
        } catch (IOException e) {
            throw new FlexLinkException(Result.SYSTEM_ERROR, "shared memory: cannot read the owner of " + file + ": "
                    + e, e);
        }
    }

    private static boolean sameDirectory(Path a, Path b) {
        try {
            return Files.isSameFile(a, b);
        } catch (IOException e) {
            return false;
        }
    }
}
