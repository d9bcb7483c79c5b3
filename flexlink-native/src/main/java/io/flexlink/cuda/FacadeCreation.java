package io.flexlink.cuda;

import io.flexlink.Communicator;
import io.flexlink.FlexLink;
import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.UniqueId;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.cuda.NcclFacade.FacadeComm;
import io.flexlink.runtime.Backend;
import java.util.ArrayList;
import java.util.List;

/**
 * How the facade makes one rank ({@code ncclCommInitRank}, {@code ncclCommInitRankConfig}): at once; or,
 * inside {@code ncclGroupStart/ncclGroupEnd}, at the group's outermost end, every deferred rank of the
 * thread together, one thread each (NCCL's way for one thread to make several ranks); or, with
 * {@code blocking = 0}, in the background, the call answering ncclInProgress. A deferred or background
 * rank's handle is written at once; ncclCommGetAsyncError answers ncclInProgress until it is made, other calls
 * ncclInvalidArgument ({@link FacadePending}).
 * The {@link Maker} makes the communicator: on the CUDA backend for the facade ({@link #CUDA}), on
 * another where a program gives one.
 */
final class FacadeCreation {
    /** Makes one rank's communicator. */
    interface Maker {
        /** The device of the calling thread (CUDA: its current device); may fail with SYSTEM_ERROR. */
        int device();

        /** Creates rank {@code rank} of {@code nranks} over {@code id} on {@code device}, for {@code handle}. */
        FacadeComm make(long handle, int nranks, UniqueId id, int rank, int device, FacadeOptions options);
    }

    /** The facade's: the CUDA backend, the calling thread's current device. */
    static final FacadeCreation CUDA = new FacadeCreation(new Maker() {
        @Override
        public int device() {
            NcclFacade.backend(); // SYSTEM_ERROR, saying why, where CUDA is missing
            return Devices.refresh();
        }

        @Override
        public FacadeComm make(long handle, int nranks, UniqueId id, int rank, int device, FacadeOptions options) {
            CudaBackend backend = NcclFacade.backend();
            int previous = Devices.enter(device); // a background thread starts on no device
            NcclTransport.beginCapture();
            Communicator comm;
            List<NcclComm> nccls;
            try {
                // the config's NCCL tuning reaches the primary's NCCL communicator, and the splits of this one
                Backend on = options.tuning().equals(NcclTuning.DEFAULT) ? backend : backend.tuned(options.tuning());
                comm = FlexLink.initRank(on, FlexLinkConfig.fromEnvironment(), nranks, id, rank, device);
            } finally {
                nccls = NcclTransport.endCapture();
                Devices.exit(previous);
            }
            return new FacadeComm(handle, comm, nccls.size() == 1 ? nccls.get(0) : null, backend, options.commName(),
                    options.blocking());
        }
    });

    /** Per thread: the ranks deferred to the end of its facade group. */
    private static final ThreadLocal<List<Job>> DEFERRED = ThreadLocal.withInitial(ArrayList::new);

    private final Maker maker;

    FacadeCreation(Maker maker) {
        this.maker = maker;
    }

    /** One rank to make later. */
    private record Job(FacadeCreation by, FacadePending.Entry entry, int nranks, UniqueId id, int rank, int device,
                       FacadeOptions options) {
        void run() {
            String what = "ncclCommInitRank (" + NcclFacade.label(entry.handle, options.commName()) + ", rank " + rank
                    + " of " + nranks + ")";
            try {
                FacadePending.made(entry, by.maker.make(entry.handle, nranks, id, rank, device, options));
            } catch (FlexLinkException e) {
                FacadePending.failed(entry, NcclFacade.failed(what, e), what + ": " + e.getMessage());
            } catch (RuntimeException | LinkageError e) {
                FacadePending.failed(entry, NcclFacade.internal(what, e), what + ": unexpected " + e);
            }
        }
    }

    /**
     * Makes rank {@code rank} of {@code nranks} over the 128 bytes {@code id}; writes its handle into
     * {@code handle[0]} when the code is ncclSuccess or ncclInProgress. Bad arguments: nothing is made.
     */
    int initRank(long[] handle, int nranks, byte[] id, int rank, FacadeOptions options) {
        String what = "ncclCommInitRank" + (options.commName() == null ? "" : " '" + options.commName() + "'");
        try {
            UniqueId uid = UniqueId.fromBytes(id);
            if (nranks < 1 || nranks > FlexLink.MAX_RANKS) {
                throw new FlexLinkException(Result.INVALID_ARGUMENT, "nranks: " + nranks + " is not in [1, "
                        + FlexLink.MAX_RANKS + "]");
            }
            if (rank < 0 || rank >= nranks) {
                throw new FlexLinkException(Result.INVALID_ARGUMENT, "rank: " + rank + " is not in [0, " + nranks + ")");
            }
            int device = maker.device();
            long h = NcclFacade.newHandle();
            if (NcclFacade.groupDepth() > 0 || !options.blocking()) {
                Job job = new Job(this, FacadePending.add(h, options.commName()), nranks, uid, rank, device, options);
                handle[0] = h;
                if (NcclFacade.groupDepth() > 0) {
                    DEFERRED.get().add(job);
                    return Result.SUCCESS.code();
                }
                start(job);
                return Result.IN_PROGRESS.code();
            }
            NcclFacade.put(maker.make(h, nranks, uid, rank, device, options));
            handle[0] = h;
            return Result.SUCCESS.code();
        } catch (FlexLinkException e) {
            return NcclFacade.failed(what, e);
        } catch (RuntimeException | LinkageError e) {
            return NcclFacade.internal(what, e);
        }
    }

    private static Thread start(Job job) {
        Thread t = new Thread(job::run, "flexlink-nccl-init-r" + job.rank);
        t.setDaemon(true);
        t.start();
        return t;
    }

    /**
     * The outermost facade group's end: makes this thread's deferred ranks together. Waits for them and
     * returns the first failure's code, unless every one is non-blocking: then ncclInProgress at once.
     */
    static int endGroup() {
        List<Job> jobs = DEFERRED.get();
        if (jobs.isEmpty()) {
            return Result.SUCCESS.code();
        }
        List<Job> mine = new ArrayList<>(jobs);
        jobs.clear();
        boolean wait = false;
        for (Job j : mine) {
            wait |= j.options.blocking();
        }
        List<Thread> threads = new ArrayList<>();
        for (Job j : mine) {
            threads.add(start(j));
        }
        if (!wait) {
            return Result.IN_PROGRESS.code();
        }
        boolean interrupted = false;
        for (Thread t : threads) {
            while (true) {
                try {
                    t.join(); // each creation is bounded by flexlink.initTimeout
                    break;
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        for (Job j : mine) {
            int code = j.entry.code();
            if (code != Result.SUCCESS.code()) {
                return code;
            }
        }
        return Result.SUCCESS.code();
    }
}
