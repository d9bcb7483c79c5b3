package io.flexlink;

import io.flexlink.comm.Backends;
import io.flexlink.comm.CommunicatorFactory;
import io.flexlink.comm.Groups;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.Backend;

/**
 * Entry point: makes communicators, like {@code ncclCommInitAll} and {@code ncclCommInitRank}, and
 * groups calls like {@code ncclGroupStart}/{@code ncclGroupEnd}.
 *
 * <pre>{@code
 * Backend backend = FlexLink.backend();             // CUDA when a GPU is there, else the host backend
 * Communicator[] comms = FlexLink.initAll(backend, 0, 1, 2, 3);
 * comms[r].allReduce(send, recv, count, DataType.FLOAT32, ReduceOp.SUM, stream);
 * }</pre>
 */
public final class FlexLink {
    /** The library version. */
    public static final String VERSION = "0.1.0";

    private static volatile Backend defaultBackend;

    private FlexLink() {
    }

    /** The process's default backend, chosen by {@code flexlink.backend} (opened on first use). */
    public static Backend backend() {
        Backend b = defaultBackend;
        if (b == null) {
            synchronized (FlexLink.class) {
                b = defaultBackend;
                if (b == null) {
                    b = Backends.open(FlexLinkConfig.fromEnvironment());
                    defaultBackend = b;
                }
            }
        }
        return b;
    }

    /** Opens a backend for {@code config} (the caller owns and closes it). */
    public static Backend openBackend(FlexLinkConfig config) {
        return Backends.open(config);
    }

    /** One communicator per device in {@code devices}, all created by this thread, on the default backend. */
    public static Communicator[] initAll(int... devices) {
        return initAll(backend(), FlexLinkConfig.fromEnvironment(), devices);
    }

    /** One communicator per device in {@code devices} on {@code backend}. */
    public static Communicator[] initAll(Backend backend, int... devices) {
        return initAll(backend, FlexLinkConfig.fromEnvironment(), devices);
    }

    public static Communicator[] initAll(Backend backend, FlexLinkConfig config, int... devices) {
        return CommunicatorFactory.initAll(backend, config, devices);
    }

    /** A fresh unique id; give it to every rank (like {@code ncclGetUniqueId}). */
    public static UniqueId getUniqueId() {
        return UniqueId.random();
    }

    /** This thread's rank of an {@code nranks}-rank communicator identified by {@code id}, on the default backend. */
    public static Communicator initRank(int nranks, UniqueId id, int rank, int device) {
        return initRank(backend(), FlexLinkConfig.fromEnvironment(), nranks, id, rank, device);
    }

    public static Communicator initRank(Backend backend, FlexLinkConfig config, int nranks, UniqueId id, int rank,
                                        int device) {
        return CommunicatorFactory.initRank(backend, config, nranks, id, rank, device);
    }

    /** Starts a group of calls on this thread (like {@code ncclGroupStart}); groups nest. */
    public static void groupStart() {
        Groups.start();
    }

    /** Ends the innermost group; the outermost launches the group's calls (like {@code ncclGroupEnd}). */
    public static void groupEnd() {
        Groups.end();
    }
}
