package io.flexlink.cuda;

import io.flexlink.runtime.ForwardingBackend;
import io.flexlink.runtime.PrimaryTransport;

/**
 * A CUDA backend whose primary path creates its NCCL communicators with an {@link NcclTuning}
 * ({@link CudaBackend#tuned}); everything else is the backend's own. Communicators made on it keep it, so their
 * splits, shrinks and grows are tuned alike. It owns nothing: closing it leaves the backend open, which its
 * opener closes (several tuned views may share one backend).
 */
final class NcclTunedBackend extends ForwardingBackend {
    private final NcclTransport transport;

    NcclTunedBackend(CudaBackend backend, NcclTransport transport) {
        super(backend);
        this.transport = transport;
    }

    @Override
    public PrimaryTransport primaryTransport() {
        return transport;
    }

    /** The tuning cache's key: shares learned with one NCCL tuning are not another's. */
    @Override
    public String fingerprint() {
        return super.fingerprint() + "|nccl=" + transport.tuning().describe();
    }

    /** The backend stays its opener's. */
    @Override
    public void close() {
    }
}
