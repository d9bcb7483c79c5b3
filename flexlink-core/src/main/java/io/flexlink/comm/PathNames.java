package io.flexlink.comm;

import io.flexlink.path.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * How a communicator's statistics and log name its paths, how many streams each auxiliary path has, and why it has
 * no windows.
 */
final class PathNames {
    private PathNames() {
    }

    /** {@code primary} (or {@code primary(off)}), then the auxiliary paths in order. */
    static List<String> of(Path primary, Path[] aux) {
        List<String> names = new ArrayList<>();
        names.add(primary == null ? "primary(off)" : primary.name());
        for (Path p : aux) {
            names.add(p.name());
        }
        return names;
    }

    static int[] streams(Path[] aux) {
        int[] streams = new int[aux.length];
        for (int i = 0; i < aux.length; i++) {
            streams[i] = aux[i].streams().length;
        }
        return streams;
    }

    /** Why a single-node communicator has no NCCL one-sided calls: no primary path, or one that is not NCCL. */
    static String noOneSided(boolean hasPrimary, io.flexlink.runtime.PrimaryTransport transport) {
        return hasPrimary ? "its primary path is " + transport.describe() + ", not NCCL"
                : "its primary path is off: several ranks on one GPU, or switched off";
    }
}
