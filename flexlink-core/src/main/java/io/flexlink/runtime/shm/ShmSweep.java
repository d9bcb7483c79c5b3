package io.flexlink.runtime.shm;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Removes shared-memory files that crashed runs left behind: files of this user
 * ({@code flexlink-<uid>-<pid>-*}) whose process is gone. A file lives only from its creation until
 * every rank has mapped it, so only a process that died in that window leaves one. Runs once per
 * directory and process, when a backend starts.
 */
public final class ShmSweep {
    private static final Logger LOG = LoggerFactory.getLogger(ShmSweep.class);
    private static final Set<Path> SWEPT = ConcurrentHashMap.newKeySet();
    private static final String UID = readUid();

    private ShmSweep() {
    }

    /** The numeric user id of this process (from /proc/self), or the user name where that is unknown. */
    static String uid() {
        return UID;
    }

    private static String readUid() {
        try {
            return String.valueOf(Files.getAttribute(Path.of("/proc/self"), "unix:uid"));
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException | SecurityException e) {
            return System.getProperty("user.name", "user").replaceAll("[^A-Za-z0-9_.]", "_");
        }
    }

    /** {@link #sweep} once per directory in this process; never fails. */
    public static void sweepOnce(Path dir) {
        if (SWEPT.add(dir.toAbsolutePath())) {
            int removed = sweep(dir);
            if (removed > 0) {
                LOG.info("INIT removed {} shared-memory file(s) of crashed FlexLink processes from {}", removed, dir);
            }
        }
    }

    /** Removes this user's files in {@code dir} whose process is not alive; returns how many. */
    public static int sweep(Path dir) {
        if (!Files.isDirectory(dir)) {
            return 0;
        }
        String mine = ShmSegment.FILE_PREFIX + UID + "-";
        long self = ProcessHandle.current().pid();
        int removed = 0;
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, mine + "*")) {
            for (Path f : files) {
                long pid = pidOf(f.getFileName().toString(), mine.length());
                // a pid that is alive may be a reused one: keeping its file is the safe mistake
                if (pid <= 0 || pid == self || ProcessHandle.of(pid).isPresent()) {
                    continue;
                }
                try {
                    if (Files.deleteIfExists(f)) {
                        removed++;
                    }
                } catch (IOException e) {
                    LOG.debug("INIT cannot remove stale {}: {}", f, e.toString());
                }
            }
        } catch (IOException | RuntimeException e) {
            LOG.debug("INIT cannot sweep {}: {}", dir, e.toString());
        }
        return removed;
    }

    /** The pid in {@code flexlink-<uid>-<pid>-<hex>}, or -1. */
    static long pidOf(String name, int from) {
        int dash = name.indexOf('-', from);
        if (dash <= from) {
            return -1;
        }
        try {
            return Long.parseLong(name.substring(from, dash));
        } catch (NumberFormatException e) {
            return -1;
        }
    }
}
