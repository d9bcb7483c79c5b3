package io.flexlink.hier;

import io.flexlink.FlexLinkException;
import io.flexlink.runtime.PeerOps;
import io.flexlink.runtime.PrimaryComm;
import io.flexlink.runtime.PrimaryTransport;
import io.flexlink.runtime.RuntimeStream;

/**
 * Cross-node transfers on a flat communicator of the primary transport over every rank of the job (NCCL on
 * CUDA): its grouped send/recv is NCCL's own, which connects a pair at its first transfer. Made once with
 * the hierarchy, because NCCL's creation needs every rank; it carries nothing but Send and Recv between
 * nodes, so the collectives keep their rails.
 */
final class PrimaryPeers implements PeerNet {
    private final PrimaryComm comm;
    private final PrimaryTransport transport;

    PrimaryPeers(PrimaryComm comm, PrimaryTransport transport) {
        this.comm = comm;
        this.transport = transport;
    }

    @Override
    public void exchange(PeerOps ops, RuntimeStream stream) {
        comm.exchange(ops, stream);
    }

    @Override
    public PrimaryTransport transport() {
        return transport;
    }

    @Override
    public FlexLinkException asyncError() {
        return comm.asyncError();
    }

    @Override
    public long bytesReceived() {
        return -1;
    }

    @Override
    public void abort() {
        comm.abort();
    }

    @Override
    public void close() {
        comm.close();
    }
}
