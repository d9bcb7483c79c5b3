package io.flexlink.cuda;

import io.flexlink.runtime.CaptureUser;
import java.util.List;
import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.runtime.RuntimeGraph;
import io.flexlink.runtime.RuntimeStream;
import org.bytedeco.cuda.cudart.CUgraphExec_st;
import org.bytedeco.cuda.cudart.CUgraph_st;
import org.bytedeco.cuda.global.cudart;

/** One instantiated CUDA graph ({@code cudaGraphExec_t} and the graph it came from). */
final class CudaGraph implements RuntimeGraph {
    private final CUgraph_st graph;
    private final CUgraphExec_st exec;
    /** Those whose work the graph holds (communicators): a replay after one is released would use freed memory. */
    private final List<CaptureUser> users;
    private boolean closed;

    private CudaGraph(CUgraph_st graph, CUgraphExec_st exec, List<CaptureUser> users) {
        this.graph = graph;
        this.exec = exec;
        this.users = users;
    }

    /** Ends {@code stream}'s capture and instantiates what it captured, the work of {@code users}. */
    static CudaGraph endCapture(CudaStream stream, List<CaptureUser> users) {
        CUgraph_st g = new CUgraph_st();
        int rc = cudart.cudaStreamEndCapture(stream.handle(), g);
        if (rc != 0) {
            throw CudaCheck.rtError(rc, "cudaStreamEndCapture on stream " + stream.label()
                    + " (an operation inside the capture was not capturable)");
        }
        CUgraphExec_st e = new CUgraphExec_st();
        // relaxed: another stream of this thread may still be capturing (one thread driving several ranks
        // captures every rank's stream before it ends any), and instantiating is an unsafe call during that
        int[] mode = CaptureMode.relax();
        try {
            rc = cudart.cudaGraphInstantiate(e, g, 0L);
        } finally {
            CaptureMode.restore(mode);
        }
        if (rc != 0) {
            cudart.cudaGraphDestroy(g);
            throw CudaCheck.rtError(rc, "cudaGraphInstantiate");
        }
        return new CudaGraph(g, e, users);
    }

    @Override
    public synchronized void launch(RuntimeStream stream) {
        if (closed) {
            throw new FlexLinkException(Result.INVALID_USAGE, "graph: launched after close");
        }
        for (CaptureUser u : users) {
            String released = u.released();
            if (released != null) {
                throw new FlexLinkException(Result.INVALID_USAGE, "graph: it holds captured calls of " + released
                        + "; a replay would use its freed memory (destroy the graph before the communicator)");
            }
        }
        int rc = cudart.cudaGraphLaunch(exec, ((CudaStream) stream).handle());
        if (rc != 0) {
            throw CudaCheck.rtError(rc, "cudaGraphLaunch on stream " + stream.label());
        }
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        cudart.cudaGraphExecDestroy(exec);
        cudart.cudaGraphDestroy(graph);
    }
}
