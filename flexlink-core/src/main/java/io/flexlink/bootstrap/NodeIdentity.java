package io.flexlink.bootstrap;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.config.FlexLinkConfig;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Which node this process runs on, as the rendezvous compares it: ranks with equal ids share staging
 * memory, so equal ids must mean "one kernel and one shared-memory directory". The id is the host name,
 * the kernel's boot id ({@code /proc/sys/kernel/random/boot_id}: two machines never share it, even with
 * equal host names) and the device and inode of the shared-memory directory ({@code flexlink.shm.dir}):
 * two containers on one host have the same boot id but, unless they share their IPC namespace and
 * {@code /dev/shm}, different tmpfs instances, so they are different nodes and never try to map each
 * other's files. {@code flexlink.nodeId} replaces it all (emulated nodes in tests; containers whose
 * shared memory is arranged otherwise).
 */
public final class NodeIdentity {
    /** Ids longer than this are refused: the rendezvous carries every rank's. */
    static final int MAX_BYTES = 512;
    private static final Path BOOT_ID = Path.of("/proc/sys/kernel/random/boot_id");

    private NodeIdentity() {
    }

    /** This process's node id for {@code config}. */
    public static String of(FlexLinkConfig config) {
        String override = config.get(FlexLinkConfig.NODE_ID).trim();
        if (!override.isEmpty()) {
            if (override.getBytes(StandardCharsets.UTF_8).length > MAX_BYTES) {
                throw new FlexLinkException(Result.INVALID_ARGUMENT, "flexlink.nodeId: longer than " + MAX_BYTES
                        + " bytes");
            }
            return override;
        }
        return hostName() + "/" + bootId() + "/" + shmInstance(config.shmDir());
    }

    /** The readable part of a node id: the host name of a derived id, the whole of a given one. */
    public static String displayName(String nodeId) {
        int slash = nodeId.indexOf('/');
        return slash > 0 && nodeId.chars().filter(c -> c == '/').count() == 2 ? nodeId.substring(0, slash) : nodeId;
    }

    static String hostName() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            String h = System.getenv("HOSTNAME");
            return h == null || h.isBlank() ? "localhost" : h.trim();
        }
    }

    /** The boot id, or {@code no-boot-id} where there is none (not Linux): the host name must then do. */
    static String bootId() {
        try {
            return Files.readString(BOOT_ID, StandardCharsets.US_ASCII).trim();
        } catch (IOException | SecurityException e) {
            return "no-boot-id";
        }
    }

    /** {@code dev:inode} of the shared-memory directory, or {@code no-shm} where it cannot be read. */
    static String shmInstance(Path dir) {
        try {
            return Files.getAttribute(dir, "unix:dev") + ":" + Files.getAttribute(dir, "unix:ino");
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException | SecurityException e) {
            return "no-shm";
        }
    }
}
