package io.flexlink.ddp;

import static io.flexlink.runtime.NativeMemory.UNSAFE;

import io.flexlink.Buffer;
import io.flexlink.CommStats;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.ReduceOp;
import io.flexlink.Result;
import io.flexlink.Stream;
import java.util.List;
import java.util.Map;

/** One rank that reduces nothing; its AllGather copies the rank's own block (the only one). */
final class InertCommunicator implements Communicator {
    @Override
    public java.util.Optional<Communicator> split(int color, int key) {
        throw new UnsupportedOperationException("a test's one-rank stand-in does not split");
    }

    @Override
    public java.util.Optional<Communicator> shrink(int[] excluded, boolean abortFirst) {
        throw new UnsupportedOperationException("a test's one-rank stand-in does not shrink");
    }

    @Override
    public io.flexlink.UniqueId growId() {
        throw new UnsupportedOperationException("a test's one-rank stand-in does not grow");
    }

    @Override
    public Communicator grow(int nRanks, io.flexlink.UniqueId id) {
        throw new UnsupportedOperationException("a test's one-rank stand-in does not grow");
    }

    @Override
    public void finalizeComm() { }

    @Override
    public void revoke() { }

    @Override
    public int rank() {
        return 0;
    }

    @Override
    public int size() {
        return 1;
    }

    @Override
    public int device() {
        return 0;
    }

    @Override
    public void allReduce(Buffer send, Buffer recv, long count, DataType type, ReduceOp op, Stream stream) {
    }

    @Override
    public void allReduce(long send, long recv, long count, DataType type, ReduceOp op, Stream stream) {
    }

    @Override
    public void allGather(Buffer send, Buffer recv, long sendCount, DataType type, Stream stream) {
        allGather(send.address(), recv.address(), sendCount, type, stream);
    }

    @Override
    public void allGather(long send, long recv, long sendCount, DataType type, Stream stream) {
        UNSAFE.copyMemory(send, recv, sendCount * type.size());
    }

    @Override
    public void reduceScatter(Buffer send, Buffer recv, long recvCount, DataType type, ReduceOp op, Stream s) {
    }

    @Override
    public void reduceScatter(long send, long recv, long recvCount, DataType type, ReduceOp op, Stream s) {
    }

    @Override
    public void broadcast(Buffer send, Buffer recv, long count, DataType type, int root, Stream stream) {
    }

    @Override
    public void broadcast(long send, long recv, long count, DataType type, int root, Stream stream) {
    }

    @Override
    public void reduce(Buffer send, Buffer recv, long count, DataType type, ReduceOp op, int root, Stream s) {
    }

    @Override
    public void allToAll(Buffer send, Buffer recv, long count, DataType type, Stream s) {
    }

    @Override
    public void allToAll(long send, long recv, long count, DataType type, Stream s) {
    }

    @Override
    public void gather(Buffer send, Buffer recv, long count, DataType type, int root, Stream s) {
    }

    @Override
    public void gather(long send, long recv, long count, DataType type, int root, Stream s) {
    }

    @Override
    public void scatter(Buffer send, Buffer recv, long count, DataType type, int root, Stream s) {
    }

    @Override
    public void scatter(long send, long recv, long count, DataType type, int root, Stream s) {
    }

    @Override
    public void send(Buffer buff, long count, DataType type, int peer, Stream s) {
    }

    @Override
    public void send(long buff, long count, DataType type, int peer, Stream s) {
    }

    @Override
    public void recv(Buffer buff, long count, DataType type, int peer, Stream s) {
    }

    @Override
    public void recv(long buff, long count, DataType type, int peer, Stream s) {
    }

    @Override
    public void allToAllv(long send, long[] sendCounts, long[] sendDispls, long recv, long[] recvCounts,
                          long[] recvDispls, DataType type, Stream s) {
    }

    @Override
    public void reduce(long send, long recv, long count, DataType type, ReduceOp op, int root, Stream s) {
    }

    @Override
    public io.flexlink.PreMulSum createPreMulSum(double scalar, DataType type) {
        throw new UnsupportedOperationException("a test's one-rank stand-in makes no PreMulSum");
    }

    @Override
    public io.flexlink.PreMulSum createPreMulSum(long scalar, DataType type) {
        throw new UnsupportedOperationException("a test's one-rank stand-in makes no PreMulSum");
    }

    @Override
    public io.flexlink.PreMulSum createPreMulSumOnDevice(long scalar, DataType type) {
        throw new UnsupportedOperationException("a test's one-rank stand-in makes no PreMulSum");
    }

    @Override
    public void allReduce(Buffer send, Buffer recv, long count, DataType type, io.flexlink.Reduction op, Stream s) {
    }

    @Override
    public void allReduce(long send, long recv, long count, DataType type, io.flexlink.Reduction op, Stream s) {
    }

    @Override
    public void reduceScatter(Buffer send, Buffer recv, long count, DataType type, io.flexlink.Reduction op,
                              Stream s) {
    }

    @Override
    public void reduceScatter(long send, long recv, long count, DataType type, io.flexlink.Reduction op, Stream s) {
    }

    @Override
    public void reduce(Buffer send, Buffer recv, long count, DataType type, io.flexlink.Reduction op, int root,
                       Stream s) {
    }

    @Override
    public void reduce(long send, long recv, long count, DataType type, io.flexlink.Reduction op, int root,
                       Stream s) {
    }

    @Override
    public Result getAsyncError() {
        return Result.SUCCESS;
    }

    @Override
    public CommStats stats() {
        return new CommStats(List.of(), Map.of(), List.of(), Map.of());
    }

    @Override
    public io.flexlink.Registration register(long address, long bytes) {
        throw new UnsupportedOperationException("a test's one-rank stand-in registers nothing");
    }

    @Override
    public List<io.flexlink.Registration> registrations() {
        return List.of();
    }

    @Override
    public io.flexlink.Window registerWindow(long address, long bytes, int flags) {
        throw new UnsupportedOperationException("a test's one-rank stand-in has no windows");
    }

    @Override
    public List<io.flexlink.Window> windows() {
        return List.of();
    }

    @Override
    public void putSignal(long src, long count, DataType type, int peer, io.flexlink.Window peerWindow,
                          long peerOffset, int signal, Stream stream) {
        throw new UnsupportedOperationException("a test's one-rank stand-in has no windows");
    }

    @Override
    public void signal(int peer, int signal, Stream stream) {
        throw new UnsupportedOperationException("a test's one-rank stand-in has no windows");
    }

    @Override
    public void waitSignal(List<io.flexlink.SignalWait> waits, Stream stream) {
        throw new UnsupportedOperationException("a test's one-rank stand-in has no windows");
    }

    @Override
    public void abort() { }

    @Override
    public void close() {
    }
}
