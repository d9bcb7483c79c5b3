package io.flexlink.runtime.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A shared-memory name comes from another process: only a regular {@code flexlink-} file of this user,
 * directly inside this rank's shm directory and not reached through a link, is mapped.
 */
class ShmOpenCheckTest {
    @TempDir
    Path dir;
    @TempDir
    Path elsewhere;

    private static String name(Path file) {
        return ShmSegment.NAME_PREFIX + file;
    }

    private FlexLinkException refused(String name, Result result) {
        FlexLinkException e = assertThrows(FlexLinkException.class, () -> ShmSegment.open(dir, name, 4096));
        assertEquals(result, e.result(), e.getMessage());
        return e;
    }

    @Test
    void aFileOfThisUserInTheDirectoryIsMapped() throws Exception {
        try (ShmSegment a = ShmSegment.create(dir, 4096); ShmSegment b = ShmSegment.open(dir, a.name(), 4096)) {
            assertEquals(a.file(), b.file());
        }
    }

    @Test
    void aFileInAnotherDirectoryIsRefused() {
        try (ShmSegment a = ShmSegment.create(elsewhere, 4096)) {
            String m = refused(a.name(), Result.INVALID_USAGE).getMessage();
            assertTrue(m.contains("is not a file directly inside this rank's shm directory " + dir), m);
        }
    }

    @Test
    void dotDotAndSubdirectoriesAreRefused() throws Exception {
        try (ShmSegment a = ShmSegment.create(dir, 4096)) {
            Files.createDirectory(dir.resolve("sub"));
            String up = ShmSegment.NAME_PREFIX + dir + "/sub/../" + a.file().getFileName();
            assertTrue(refused(up, Result.INVALID_USAGE).getMessage().contains("directly inside"));
            Path below = Files.createFile(dir.resolve("sub").resolve("flexlink-x"));
            assertTrue(refused(name(below), Result.INVALID_USAGE).getMessage().contains("directly inside"));
        }
    }

    @Test
    void aNameWithoutThePrefixIsRefused() throws Exception {
        Path other = Files.createFile(dir.resolve("passwd"));
        assertTrue(refused(name(other), Result.INTERNAL_ERROR).getMessage().contains("is not a FlexLink file"));
        assertTrue(refused("/etc/passwd", Result.INTERNAL_ERROR).getMessage().contains("is not a file name"));
    }

    @Test
    void symbolicLinksAreRefusedWhereverTheyPoint() throws Exception {
        try (ShmSegment a = ShmSegment.create(dir, 4096)) {
            Path toOurs = Files.createSymbolicLink(dir.resolve("flexlink-link"), a.file());
            assertTrue(refused(name(toOurs), Result.SYSTEM_ERROR).getMessage().contains("is a symbolic link"));
            Path target = Files.write(elsewhere.resolve("precious"), new byte[4096]);
            Path toOther = Files.createSymbolicLink(dir.resolve("flexlink-other"), target);
            assertTrue(refused(name(toOther), Result.SYSTEM_ERROR).getMessage().contains("is a symbolic link"));
        }
    }

    @Test
    void whatIsNotARegularFileIsRefused() throws Exception {
        Path d = Files.createDirectory(dir.resolve("flexlink-dir"));
        assertTrue(refused(name(d), Result.SYSTEM_ERROR).getMessage().contains("is not a regular file"));
    }

    @Test
    void aFileOfAnotherUserIsRefused() {
        try (ShmSegment a = ShmSegment.create(dir, 4096)) {
            FlexLinkException e = assertThrows(FlexLinkException.class,
                    () -> ShmSegment.open(dir, a.name(), 4096, "424242"));
            assertEquals(Result.SYSTEM_ERROR, e.result());
            assertTrue(e.getMessage().contains("belongs to user " + ShmSweep.uid() + ", not to this process's user "
                    + "424242"), e.getMessage());
        }
    }

    @Test
    void aFileChownedToAnotherUserIsRefused() throws Exception {
        assumeTrue("0".equals(ShmSweep.uid()), "only root can give a file away");
        try (ShmSegment a = ShmSegment.create(dir, 4096)) {
            Files.setAttribute(a.file(), "unix:uid", 424242);
            assertTrue(refused(a.name(), Result.SYSTEM_ERROR).getMessage().contains("belongs to user 424242"));
        }
    }
}
