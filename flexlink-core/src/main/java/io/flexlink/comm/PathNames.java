package io.flexlink.comm;

import io.flexlink.path.Path;
import java.util.ArrayList;
import java.util.List;

/** How a communicator's statistics and log name its paths, and how many streams each auxiliary path has. */
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
}
