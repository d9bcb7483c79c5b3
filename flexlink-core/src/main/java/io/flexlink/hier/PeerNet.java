package io.flexlink.hier;

import io.flexlink.FlexLinkException;
import io.flexlink.runtime.PeerOps;
import io.flexlink.runtime.PrimaryTransport;
import io.flexlink.runtime.RuntimeStream;

/**
 * Point-to-point transfers between any two ranks of the job, for Send and Recv between nodes: a flat
 * communicator of the backend's primary transport over every rank on CUDA (NCCL crosses nodes and connects
 * a pair only when it first transfers), a TCP connection per direction and pair on the host backend
 * ({@link TcpPeers}), made when the pair first transfers. Either way only the two ranks of a transfer take
 * part: no third rank forwards anything, as with NCCL. Peers are ranks of the job; calls come from one
 * owner, under its lock.
 */
interface PeerNet extends AutoCloseable {
    /**
     * This rank's transfers of one group, all together. Transfers to this rank itself (a node of one rank has
     * no node communicator for them) are among them, already paired by the caller: the k-th send with the k-th
     * receive.
     */
    void exchange(PeerOps ops, RuntimeStream stream);

    /** The transport whose group a grouped call enters (NCCL launches there), or null where none. */
    PrimaryTransport transport();

    /** The first asynchronous error (a lost peer, NCCL's error), or null; never blocks. */
    FlexLinkException asyncError();

    /** Payload bytes this rank received from other nodes so far, or -1 where the transport does not say. */
    long bytesReceived();

    /** Stops outstanding work and releases blocked streams; safe from any thread. */
    void abort();

    /** Frees everything once the streams are done with it. */
    @Override
    void close();
}
