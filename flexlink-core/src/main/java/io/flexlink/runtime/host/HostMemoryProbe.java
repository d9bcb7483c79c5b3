package io.flexlink.runtime.host;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * How much memory this machine can still give the process: {@code MemAvailable} of {@code /proc/meminfo},
 * or less where a memory cgroup limits the process (v2 {@code memory.max} less the working set
 * {@code memory.current - inactive_file}, at every level up to the root; v1 {@code memory.limit_in_bytes}
 * less {@code memory.usage_in_bytes - total_inactive_file}). The kernel's OOM killer acts on the same
 * figures. Swap is not counted: pages that only fit in swap are not worth a run.
 */
@FunctionalInterface
interface HostMemoryProbe {
    /** Bytes available now, or a negative number when this machine does not say. */
    long availableBytes();

    /** The probe of this machine, reading {@code /proc} and {@code /sys/fs/cgroup}. */
    HostMemoryProbe SYSTEM = () -> {
        long avail = meminfo("MemAvailable:");
        long cgroup = cgroupAvailable();
        if (avail < 0) {
            return cgroup;
        }
        return cgroup < 0 ? avail : Math.min(avail, cgroup);
    };

    /** A {@code /proc/meminfo} field in bytes, or -1. */
    private static long meminfo(String field) {
        for (String line : lines(Path.of("/proc/meminfo"))) {
            if (line.startsWith(field)) {
                String[] parts = line.substring(field.length()).trim().split("\\s+");
                try {
                    return Long.parseLong(parts[0]) * (parts.length > 1 && parts[1].equalsIgnoreCase("kB") ? 1024 : 1);
                } catch (NumberFormatException e) {
                    return -1;
                }
            }
        }
        return -1;
    }

    /** The least room left under any memory cgroup limit of this process, or -1 when none limits it. */
    private static long cgroupAvailable() {
        long least = -1;
        for (String line : lines(Path.of("/proc/self/cgroup"))) {
            String[] f = line.split(":", 3);
            if (f.length < 3) {
                continue;
            }
            if (f[0].equals("0") && f[1].isEmpty()) { // cgroup v2: walk up to the root
                for (Path dir = Path.of("/sys/fs/cgroup" + f[2]); dir != null && dir.startsWith("/sys/fs/cgroup");
                     dir = dir.getParent()) {
                    least = least(least, room(dir.resolve("memory.max"), dir.resolve("memory.current"),
                            dir.resolve("memory.stat"), "inactive_file "));
                }
            } else if (List.of(f[1].split(",")).contains("memory")) { // cgroup v1
                Path dir = Path.of("/sys/fs/cgroup/memory" + f[2]);
                if (!Files.isDirectory(dir)) {
                    dir = Path.of("/sys/fs/cgroup/memory");
                }
                least = least(least, room(dir.resolve("memory.limit_in_bytes"), dir.resolve("memory.usage_in_bytes"),
                        dir.resolve("memory.stat"), "total_inactive_file "));
            }
        }
        return least;
    }

    private static long least(long a, long b) {
        return a < 0 ? b : b < 0 ? a : Math.min(a, b);
    }

    /** {@code limit - (usage - inactive file pages)}, or -1 when there is no limit or no file. */
    private static long room(Path limitFile, Path usageFile, Path statFile, String inactiveField) {
        long limit = number(limitFile);
        long usage = number(usageFile);
        if (limit < 0 || usage < 0 || limit >= Long.MAX_VALUE / 2) {
            return -1; // "max", absent, or v1's "no limit" (a huge number)
        }
        long inactive = 0;
        for (String line : lines(statFile)) {
            if (line.startsWith(inactiveField)) {
                try {
                    inactive = Long.parseLong(line.substring(inactiveField.length()).trim());
                } catch (NumberFormatException e) {
                    inactive = 0;
                }
            }
        }
        return Math.max(0, limit - Math.max(0, usage - inactive));
    }

    private static long number(Path file) {
        List<String> l = lines(file);
        if (l.isEmpty()) {
            return -1;
        }
        try {
            return Long.parseLong(l.get(0).trim());
        } catch (NumberFormatException e) {
            return -1; // "max"
        }
    }

    private static List<String> lines(Path file) {
        try {
            return Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (IOException | SecurityException | java.io.UncheckedIOException e) {
            return List.of();
        }
    }
}
