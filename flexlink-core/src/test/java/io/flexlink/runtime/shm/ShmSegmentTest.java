package io.flexlink.runtime.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import java.lang.reflect.Field;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import sun.misc.Unsafe;

/** Files in a tmpfs shared by processes: created exclusively and private, zeroed, unlinked early, swept. */
class ShmSegmentTest {
    private static final Unsafe U = unsafe();

    @TempDir
    Path dir;

    @Test
    void peersSeeTheSameBytesAndTheNameCanGoEarly() throws Exception {
        try (ShmSegment a = ShmSegment.create(dir, 10_000)) {
            assertTrue(ShmSegment.isName(a.name()));
            assertEquals(12_288, a.mappedBytes(), "whole pages");
            assertEquals(0, a.address() % 4096);
            Path file = a.file();
            String fileName = file.getFileName().toString();
            assertTrue(fileName.startsWith("flexlink-" + ShmSweep.uid() + "-" + ProcessHandle.current().pid() + "-"),
                    fileName);
            assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(file)));
            for (long i = 0; i < a.mappedBytes(); i += 8) {
                assertEquals(0, U.getLong(a.address() + i), "zero-filled");
            }
            try (ShmSegment b = ShmSegment.open(dir, a.name(), 10_000)) {
                U.putIntVolatile(null, a.address() + 64, 42);
                assertEquals(42, U.getIntVolatile(null, b.address() + 64));
                a.unlink();
                assertFalse(Files.exists(file), "unlinked once every rank mapped it");
                U.putIntVolatile(null, b.address() + 128, 7);
                assertEquals(7, U.getIntVolatile(null, a.address() + 128), "mappings outlive the name");
            }
            FlexLinkException gone = assertThrows(FlexLinkException.class, () -> ShmSegment.open(dir, a.name(), 10_000));
            assertTrue(gone.getMessage().contains("same machine"), gone.getMessage());
        }
        try (Stream<Path> left = Files.list(dir)) {
            assertEquals(0, left.count());
        }
    }

    @Test
    void theCreatorRemovesTheFileWhenItClosesFirst() throws Exception {
        ShmSegment a = ShmSegment.create(dir, 4096);
        assertTrue(Files.exists(a.file()));
        a.close();
        assertFalse(Files.exists(a.file()));
    }

    @Test
    void tooLittleSpaceFailsAtCreationWithAClearError() throws Exception {
        long free = Files.getFileStore(dir).getUsableSpace();
        // only where the file system is small enough to ask for more than it has without risk
        org.junit.jupiter.api.Assumptions.assumeTrue(free < (1L << 30), "file system too large to fill");
        FlexLinkException e = assertThrows(FlexLinkException.class, () -> ShmSegment.create(dir, free + (64 << 20)));
        assertEquals(Result.SYSTEM_ERROR, e.result());
        assertTrue(e.getMessage().contains("bytes free"), e.getMessage());
        try (Stream<Path> left = Files.list(dir)) {
            assertEquals(0, left.count(), "nothing left behind");
        }
    }

    private void nothingLeftBehind() throws Exception {
        try (Stream<Path> left = Files.list(dir)) {
            assertEquals(0, left.count(), "nothing left behind");
        }
    }

    @Test
    void tooLittleFreeSpaceIsRefusedBeforeTheFileIsMade() throws Exception {
        ShmSegment.ZeroFill never = (ch, size) -> {
            throw new AssertionError("no file should be written");
        };
        FlexLinkException e = assertThrows(FlexLinkException.class,
                () -> ShmSegment.create(dir, 64 << 20, d -> 1 << 20, never));
        assertEquals(Result.SYSTEM_ERROR, e.result());
        assertTrue(e.getMessage().contains(dir + " has 1048576 bytes free but a staging area needs 67108864"),
                e.getMessage());
        assertTrue(e.getMessage().contains("--shm-size"), e.getMessage());
        nothingLeftBehind();
    }

    @Test
    void runningOutOfSpaceWhileWritingIsAClearErrorWhateverTheMessageLanguage() throws Exception {
        long[] free = {1L << 30};
        ShmSegment.ZeroFill fillsUp = (ch, size) -> {
            ch.write(java.nio.ByteBuffer.allocate(8192), 0);
            free[0] = 100; // another process took the rest meanwhile
            throw new java.io.IOException("Auf dem Gerät ist kein Speicherplatz mehr verfügbar");
        };
        FlexLinkException e = assertThrows(FlexLinkException.class,
                () -> ShmSegment.create(dir, 1 << 20, d -> free[0], fillsUp));
        assertEquals(Result.SYSTEM_ERROR, e.result());
        assertTrue(e.getMessage().contains("bytes free but a staging area needs 1048576"), e.getMessage());
        nothingLeftBehind();
    }

    @Test
    void anotherWriteFailureIsNotCalledTooLittleSpace() throws Exception {
        ShmSegment.ZeroFill fails = (ch, size) -> {
            throw new java.io.IOException("Input/output error");
        };
        FlexLinkException e = assertThrows(FlexLinkException.class,
                () -> ShmSegment.create(dir, 1 << 20, d -> 1L << 30, fails));
        assertEquals(Result.SYSTEM_ERROR, e.result());
        assertTrue(e.getMessage().contains("cannot create") && e.getMessage().contains("Input/output error"),
                e.getMessage());
        nothingLeftBehind();
    }

    @Test
    void outOfSpaceIsJudgedByTheRoomLeftAndOnlyElseByTheMessage() {
        java.io.IOException localized = new java.io.IOException("Plus d'espace disponible sur le périphérique");
        assertTrue(ShmSegment.outOfSpace(localized, 4096, 0));
        assertFalse(ShmSegment.outOfSpace(localized, 4096, 1L << 30));
        assertTrue(ShmSegment.outOfSpace(new java.io.IOException("No space left on device"), 4096, -1));
        assertFalse(ShmSegment.outOfSpace(localized, 4096, -1), "room unknown and no English: not judged so");
    }

    @Test
    void moreThanOneMappingCanHoldIsRefused() {
        FlexLinkException tooBig = assertThrows(FlexLinkException.class, () -> ShmSegment.create(dir, 1L << 32));
        assertEquals(Result.INVALID_ARGUMENT, tooBig.result());
        assertTrue(tooBig.getMessage().contains("flexlink.chunkBytes"), tooBig.getMessage());
    }

    @Test
    void theSweepRemovesFilesOfDeadProcessesOnly() throws Exception {
        long dead = deadPid();
        Path stale = Files.createFile(dir.resolve("flexlink-" + ShmSweep.uid() + "-" + dead + "-00ff"));
        Path live = Files.createFile(dir.resolve("flexlink-" + ShmSweep.uid() + "-" + ProcessHandle.current().pid()
                + "-00ff"));
        Path otherUser = Files.createFile(dir.resolve("flexlink-999999-" + dead + "-00ff"));
        Path foreign = Files.createFile(dir.resolve("something-else"));
        assertEquals(1, ShmSweep.sweep(dir));
        assertFalse(Files.exists(stale));
        assertTrue(Files.exists(live));
        assertTrue(Files.exists(otherUser), "another user's files are theirs");
        assertTrue(Files.exists(foreign));
        assertEquals(-1, ShmSweep.pidOf("flexlink-1000-x-1", "flexlink-1000-".length()));
    }

    /** A pid no process has: one of a child that has exited. */
    private static long deadPid() throws Exception {
        Process p = new ProcessBuilder("true").start();
        p.waitFor();
        return p.pid();
    }

    private static Unsafe unsafe() {
        try {
            Field f = Unsafe.class.getDeclaredField("theUnsafe");
            f.setAccessible(true);
            return (Unsafe) f.get(null);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }
}
