package io.flexlink.path;

import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.MemOps;
import io.flexlink.runtime.host.HostBackend;
import io.flexlink.testing.GroupCalls;
import io.flexlink.testing.PathStreams;
import io.flexlink.testing.ProbeCall;
import java.lang.reflect.Method;
import java.util.Locale;

/**
 * The auxiliary paths' stream operations of one call, in the order the engine enqueues them, one line each:
 * the stream, the operation and its size (copies in bytes and rows, reductions in elements and rows of
 * peers, a flag batch as its waits {@code W} and writes {@code w} on handshake words, numbered by their
 * 64-byte line). What {@link StreamOpCount} counts, in order: where a copy engine waits on a kernel or a flag
 * between two copies, the trace shows it. The host backend executes the call; the operations are the CUDA
 * backend's. Usage: {@code StreamOpTrace collective bytesPerRank ranks chunk [rank]} (one rank's streams,
 * default 0; the call after a first one that set things up).
 */
public final class StreamOpTrace {
    private StreamOpTrace() {
    }

    public static void main(String[] args) {
        ProbeCall p = ProbeCall.parse(args);
        String rank = ".r" + (args.length > 4 ? args[4] : "0");
        FlexLinkConfig config = p.config().build();
        try (HostBackend host = new HostBackend(config)) {
            PathStreams traced = new PathStreams(host, PathStreams.Mode.COUNT);
            GroupCalls group = p.group(host, p.communicators(traced, config));
            group.enqueue();
            group.synchronize();
            traced.listen((label, m, a) -> {
                if (label.endsWith(rank) && m.getReturnType() == void.class && PathStreams.isOperation(m.getName())) {
                    System.out.printf(Locale.ROOT, "%-14s %-17s %s%n", label, m.getName(), describe(m, a));
                }
            });
            group.enqueue();
            traced.listen((label, m, a) -> { });
            group.synchronize();
            group.close();
        }
    }

    /** The size of one operation, from the arguments of {@code RuntimeStream}'s methods. */
    static String describe(Method m, Object[] a) {
        switch (m.getName()) {
            case "copy":
                return a[2] + " B";
            case "copyRows":
                return a[5] + " x " + a[4] + " B";
            case "copyRowsFromHost":
                return a[6] + " x " + a[5] + " B from host";
            case "reduce":
                return a[3] + " el";
            case "reduceRows":
                return a[5] + " el, own input + " + a[4] + " rows";
            case "memOps":
                MemOps ops = (MemOps) a[0];
                StringBuilder sb = new StringBuilder();
                for (int i = 0; i < ops.size(); i++) {
                    sb.append(i == 0 ? "" : " ").append(ops.kind(i) == MemOps.WAIT ? "W" : "w").append(ops.offset(i) / 64);
                }
                return sb.toString();
            default:
                return "";
        }
    }
}
