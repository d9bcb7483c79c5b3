package io.flexlink.bench;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.RuntimeGraph;
import io.flexlink.runtime.RuntimeStream;

/**
 * nccl-tests' -G: work captured from local ranks' streams into one graph per rank ({@link Workspace#beginCapture},
 * {@code RuntimeStream.endCapture}: CUDA graphs on the CUDA backend), launched afterwards.
 * Every stream of a range begins its capture before anything is enqueued and ends it after everything
 * was (as a thread driving several GPUs must: one group spans their streams).
 */
final class GraphCapture {
    private GraphCapture() {
    }

    /**
     * -G needs streams that capture. Tries it on a stream of the backend before anything else is made: the
     * host backend's streams have no graphs (their {@code beginCapture} throws INVALID_USAGE), which is a
     * usage error (exit 2) saying so; where it works the empty capture is ended and dropped.
     */
    static void requireCapture(Backend backend, int device, int launches) {
        try (RuntimeStream s = backend.createStream(device, "perf.graph-probe")) {
            try {
                s.beginCapture();
            } catch (FlexLinkException e) {
                throw new FlexLinkException(Result.INVALID_ARGUMENT, "-G " + launches + ": the " + backend.name()
                        + " backend's streams cannot be captured into a CUDA graph (" + e.detail() + "); run without "
                        + "-G (or -G 0), or on the CUDA backend", e);
            }
            try {
                s.endCapture().close();
            } catch (FlexLinkException e) {
                // the capture began, so the streams capture; a graph of nothing need not instantiate
            }
        }
    }

    /**
     * Captures what {@code enqueue} enqueues on local ranks {@code from..to-1} into one graph per rank;
     * on a failure every capture begun is ended (its graph dropped) before the failure is thrown.
     */
    static RuntimeGraph[] capture(Workspace ws, int from, int to, Runnable enqueue) {
        int began = from;
        try {
            for (; began < to; began++) {
                ws.beginCapture(began);
            }
            enqueue.run();
        } catch (RuntimeException | Error e) {
            for (int r = from; r < began; r++) {
                try {
                    ws.stream(r).endCapture().close();
                } catch (RuntimeException x) {
                    e.addSuppressed(x);
                }
            }
            throw e;
        }
        RuntimeGraph[] graphs = new RuntimeGraph[to - from];
        RuntimeException failure = null;
        for (int r = from; r < to; r++) {
            try {
                graphs[r - from] = ws.stream(r).endCapture();
            } catch (RuntimeException e) {
                if (failure == null) {
                    failure = e;
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        if (failure != null) {
            close(graphs);
            throw failure;
        }
        return graphs;
    }

    /** Launches each rank's graph {@code times} times on its stream, rank after rank per round (nccl-tests' order). */
    static void launch(RuntimeGraph[] graphs, Workspace ws, int from, int times) {
        for (int l = 0; l < times; l++) {
            for (int i = 0; i < graphs.length; i++) {
                graphs[i].launch(ws.stream(from + i));
            }
        }
    }

    /** Destroys the graphs (before the communicators they captured). */
    static void close(RuntimeGraph[] graphs) {
        for (RuntimeGraph g : graphs) {
            if (g != null) {
                try {
                    g.close();
                } catch (RuntimeException e) {
                    // best effort
                }
            }
        }
    }
}
