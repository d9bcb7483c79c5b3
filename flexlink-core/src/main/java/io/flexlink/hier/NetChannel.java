package io.flexlink.hier;

import io.flexlink.DataType;
import io.flexlink.ReduceOp;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.NativeMemory;
import io.flexlink.runtime.PinnedMemory;
import io.flexlink.runtime.RuntimeStream;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;

/**
 * One rank's two ring links of a TCP rail — out to the right neighbour, in from the left — or its two links
 * to one peer on another node for Send and Recv ({@link TcpPeers}: out to it, in from it), driven from
 * the caller's stream like a network proxy drives a NIC. The stream copies an outgoing chunk into a send
 * slot and raises the slot's full counter; a sender thread waits for it, writes the slot to the socket
 * and raises the slot's empty counter. A receiver thread reads each incoming chunk into a receive slot
 * (once the stream has emptied it) and raises its full counter; the stream waits for that, then copies
 * or reduces out of the slot and empties it. Chunk {@code a} of a direction uses slot {@code a % slots}
 * as its use {@code a / slots + 1}; counters only grow and are compared with ≥, as in the staging
 * protocol ({@code io.flexlink.sync.Staging}), so nothing is reset.
 *
 * <p>Only stream operations touch the user's memory, so reductions use the backend's own kernels (every
 * type and operation, NCCL's AVG); the slots are this rank's own memory: nothing is shared with another
 * node. Enqueue methods run under the owner's lock, on the thread that enqueues.
 */
final class NetChannel implements AutoCloseable {
    private static final int LINE = 64;
    /** How long closing waits for the last chunks to be sent. */
    private static final long DRAIN_NANOS = 10_000_000_000L;
    private final int slots;
    private final int chunk;
    private final PinnedMemory counters;
    /** The slots: the backend's pinned memory, so that stream operations may copy into and out of them. */
    private final PinnedMemory sendSlots;
    private final PinnedMemory recvSlots;
    private final long sendBase;
    private final long recvBase;
    private final NetProxy proxy;
    /** Chunks enqueued so far per direction (the stream side's sequence numbers). */
    private long sent;
    private long received;

    /** {@code kind}, {@code to} and {@code from} name the link and its ends in messages. */
    NetChannel(Backend backend, int slots, int chunkBytes, RailPacer pacer, String name, String kind, String to,
               String from, Runnable onFailure) {
        this.slots = slots;
        this.chunk = chunkBytes;
        this.counters = backend.allocatePinned((long) LINE * (5L * slots + 1));
        this.counters.setAbortWord(abortOffset());
        this.sendSlots = backend.allocatePinned((long) slots * chunkBytes);
        this.recvSlots = backend.allocatePinned((long) slots * chunkBytes);
        this.sendBase = sendSlots.hostAddress();
        this.recvBase = recvSlots.hostAddress();
        this.proxy = new NetProxy(this, pacer, name, kind, to, from, onFailure);
    }

    /** A rail's ring links, connected already: both threads start. */
    void connect(SocketChannel out, SocketChannel in) {
        proxy.startSending(() -> out);
        proxy.startReceiving(in);
    }

    /** A peer link's outgoing connection, dialled on the sender's thread ({@link TcpPeers}). */
    void dialOut(NetProxy.Dial dial) {
        proxy.startSending(dial);
    }

    /** A peer link's incoming connection, accepted by the listener's thread. */
    void acceptedIn(SocketChannel in) {
        proxy.startReceiving(in);
    }

    int chunkBytes() {
        return chunk;
    }

    /** Elements of {@code type} per chunk. */
    long chunkElements(DataType type) {
        return chunk / type.size();
    }

    // ---- the counters: full and empty per slot and direction, the send lengths, the abort word ----

    long sendFull(int s) {
        return (long) LINE * s;
    }

    long sendEmpty(int s) {
        return (long) LINE * (slots + s);
    }

    long sendLength(int s) {
        return (long) LINE * (2L * slots + s);
    }

    long recvFull(int s) {
        return (long) LINE * (3L * slots + s);
    }

    long recvEmpty(int s) {
        return (long) LINE * (4L * slots + s);
    }

    long abortOffset() {
        return (long) LINE * 5L * slots;
    }

    PinnedMemory counters() {
        return counters;
    }

    int slots() {
        return slots;
    }

    /** Copies {@code len} bytes of send slot {@code s} into {@code to} (the sender thread's), ready to write. */
    void readSendSlot(int s, ByteBuffer to, int len) {
        to.clear().limit(len);
        NativeMemory.copy(sendBase + (long) s * chunk, NativeMemory.address(to), len);
    }

    /** Copies {@code len} received bytes of {@code from} into receive slot {@code s} (the receiver thread's). */
    void writeRecvSlot(int s, ByteBuffer from, int len) {
        NativeMemory.copy(NativeMemory.address(from), recvBase + (long) s * chunk, len);
    }

    // ---- the stream side ----

    /** Enqueues on {@code stream}: {@code bytes} (at most one chunk) from {@code src} to the right neighbour. */
    void send(RuntimeStream stream, long src, long bytes) {
        long a = sent++;
        int s = (int) (a % slots);
        int use = (int) (a / slots + 1);
        stream.waitValue32(counters, sendEmpty(s), use - 1); // the sender thread has sent its last use
        stream.copy(sendBase + (long) s * chunk, src, bytes);
        stream.writeValue32(counters, sendLength(s), (int) bytes);
        stream.writeValue32(counters, sendFull(s), use);
        proxy.sendEnqueued(a + 1);
    }

    /** Enqueues on {@code stream}: the next chunk from the left neighbour ({@code bytes}) copied to {@code dst}. */
    void receiveCopy(RuntimeStream stream, long dst, long bytes) {
        int s = awaitReceived(stream);
        stream.copy(dst, recvBase + (long) s * chunk, bytes);
        released(stream, s);
    }

    /** Like {@link #receiveCopy}, reducing: {@code dst = a op chunk} over {@code count} elements. */
    void receiveReduce(RuntimeStream stream, long dst, long a, long count, DataType type, ReduceOp op, int divisor) {
        int s = awaitReceived(stream);
        stream.reduce(dst, a, recvBase + (long) s * chunk, count, type, op, divisor);
        released(stream, s);
    }

    private int awaitReceived(RuntimeStream stream) {
        long b = received;
        int s = (int) (b % slots);
        stream.waitValue32(counters, recvFull(s), (int) (b / slots + 1));
        return s;
    }

    private void released(RuntimeStream stream, int s) {
        long b = received++;
        stream.writeValue32(counters, recvEmpty(s), (int) (b / slots + 1));
        proxy.receiveEnqueued(b + 1);
    }

    // ---- failure and teardown ----

    /**
     * Stops the proxy threads, sets the abort word (the host backend fails every wait on these counters
     * with REMOTE_ERROR) and writes every counter past any value a stream waits for.
     */
    void abort() {
        proxy.stop();
        counters.writeCounter(abortOffset(), 1);
        for (int s = 0; s < slots; s++) {
            counters.writeCounter(sendEmpty(s), Integer.MAX_VALUE / 2);
            counters.writeCounter(recvFull(s), Integer.MAX_VALUE / 2);
        }
    }

    /** Why the links failed, or null. */
    String failure() {
        return proxy.failure();
    }

    /** What the links wait for, for a stall report. */
    /** Payload bytes that came in from the previous node so far. */
    long bytesReceived() {
        return proxy.receivedBytes();
    }

    String describe() {
        return proxy.describe(sent, received);
    }

    /** Frees the counters and slots; call only when no stream can still run an operation of this channel. */
    @Override
    public void close() {
        proxy.drain(System.nanoTime() + DRAIN_NANOS); // what is enqueued goes out, then a goodbye
        if (proxy.stopAndJoin(5_000)) {
            counters.close(); // the threads poll the counters and copy the slots until they end
            sendSlots.close();
            recvSlots.close();
        }
    }
}
