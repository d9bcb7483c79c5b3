package io.flexlink.cuda;

import static io.flexlink.cuda.FlexNccl.ncclInvalidArgument;
import static io.flexlink.cuda.FlexNccl.ncclSuccess;
import static io.flexlink.runtime.NativeMemory.UNSAFE;

import io.flexlink.Communicator;
import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.cuda.NcclFacade.FacadeComm;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.LongConsumer;
import org.bytedeco.cuda.nccl.ncclComm;
import org.bytedeco.javacpp.Pointer;
import org.bytedeco.javacpp.PointerPointer;

/**
 * {@code ncclCommSplit} and {@code ncclCommShrink} ({@link FacadeShrink}) behind {@link FlexNccl}:
 * {@link Communicator#split} or {@link Communicator#shrink} of the parent's FlexLink communicator, the child
 * registered under a handle of its own. ncclCommSplit's {@code config} gives the child its blocking and commName
 * (NULL: the parent's); the child always has the parent's FlexLink configuration and NCCL tuning, whose backend
 * it is made on (splitShare would not apply: the child's NCCL primary is made afresh, not by ncclCommSplit).
 * Outside a group the calling thread's rank
 * splits at once (every rank calls from its own thread, as NCCL requires there). Inside a group NCCL defers the
 * split to the outermost {@code ncclGroupEnd}, which is how one thread splits the several ranks it drives; the
 * facade does the same: the splits this thread recorded run there, each on a thread of its own (they wait for
 * each other), and {@code newcomm} stays NULL until then. A non-blocking one (its config's blocking = 0, or with a
 * NULL config the parent's) runs in the background: its handle is written at once and answers ncclInProgress
 * until the child is made, as a non-blocking ncclCommInitRankConfig's.
 */
final class FacadeSplit {
    /** Makes this rank's child of a parent (empty: no child here). */
    @FunctionalInterface
    interface How {
        Optional<Communicator> child(Communicator parent);
    }

    /**
     * One recorded split: the parent, how, where its handle goes, the child's options, the call's name and
     * whether this rank gets no child (known at the call: NCCL_SPLIT_NOCOLOR, an excluded rank).
     */
    private record Pending(FacadeComm parent, How how, LongConsumer out, FacadeOptions options, String call,
                           boolean none) {
    }

    private static final ThreadLocal<List<Pending>> DEFERRED = ThreadLocal.withInitial(ArrayList::new);

    private FacadeSplit() {
    }

    /** Where a child's handle goes: bytedeco's {@code @ByPtrPtr} output, the object's own address. */
    static LongConsumer into(ncclComm newcomm) {
        return h -> NcclFacade.setAddress(newcomm, h);
    }

    /** Where a child's handle goes: the {@code ncclComm_t*} slot at the PointerPointer's position. */
    @SuppressWarnings("rawtypes")
    static LongConsumer into(PointerPointer newcomm) {
        long slot = newcomm.address() + 8L * newcomm.position();
        return h -> UNSAFE.putLong(slot, h);
    }

    /**
     * ncclCommSplit; {@code out} receives the child's handle (0 for no color, and until the split is done). A
     * NULL {@code config} gives the child its parent's blocking and commName, as NCCL's; another is checked
     * like ncclCommInitRankConfig's (a bad one is ncclInvalidArgument naming the field, and nothing starts).
     */
    static int split(ncclComm comm, int color, int key, LongConsumer out, Pointer config) {
        FacadeComm parent = NcclFacade.lookup(comm); // before NULL goes out: newcomm may be comm's own object
        out.accept(0);
        if (parent == null) {
            return ncclInvalidArgument;
        }
        FacadeOptions options;
        try {
            options = FacadeOptions.child(parent, config);
        } catch (FlexLinkException e) {
            return NcclFacade.failed("ncclCommSplit", e);
        }
        return start(parent, c -> c.split(color, key), out, options, "ncclCommSplit",
                color == Communicator.SPLIT_NOCOLOR);
    }

    /**
     * Runs (or, in a group, records) one rank's split: at once when {@code options} is blocking, else in the
     * background with the child's handle written now (ncclInProgress). {@code out} already holds NULL.
     */
    static int start(FacadeComm parent, How how, LongConsumer out, FacadeOptions options, String call,
                     boolean none) {
        try {
            Pending p = new Pending(parent, how, out, options, call, none);
            if (NcclFacade.groupDepth() > 0) {
                DEFERRED.get().add(p);
                return ncclSuccess;
            }
            if (options.blocking()) {
                p.out.accept(run(p, NcclFacade.newHandle()));
                return ncclSuccess;
            }
            long h = none ? 0 : NcclFacade.newHandle();
            FacadePending.Entry entry = none ? null : FacadePending.add(h, options.commName());
            Thread t = new Thread(() -> background(p, h, entry), "flexlink-nccl-split-" + Long.toHexString(h));
            t.setDaemon(true);
            t.start();
            p.out.accept(h);
            return none ? ncclSuccess : Result.IN_PROGRESS.code(); // no handle to poll on a rank without a child
        } catch (FlexLinkException e) {
            return NcclFacade.failed(call, e);
        } catch (RuntimeException | LinkageError e) {
            return NcclFacade.internal(call, e);
        }
    }

    /** A non-blocking split: its child into the table under {@code h}, or its error into the pending entry. */
    private static void background(Pending p, long h, FacadePending.Entry entry) {
        String what = p.call + " (" + NcclFacade.label(h, p.options.commName()) + ")";
        try {
            FacadeComm child = make(p, h);
            if (entry != null) {
                FacadePending.made(entry, child);
            }
        } catch (FlexLinkException e) {
            int code = NcclFacade.failed(what, e);
            if (entry != null) {
                FacadePending.failed(entry, code, what + ": " + e.getMessage());
            }
        } catch (RuntimeException | LinkageError e) {
            int code = NcclFacade.internal(what, e);
            if (entry != null) {
                FacadePending.failed(entry, code, what + ": unexpected " + e);
            }
        }
    }

    /** A blocking split: the child registered under {@code h}, which is returned; 0 for no child. */
    private static long run(Pending p, long h) {
        FacadeComm child = make(p, h);
        if (child == null) {
            return 0;
        }
        NcclFacade.put(child);
        return h;
    }

    /** This rank's child under handle {@code h} (not in the table yet), or null for none. */
    private static FacadeComm make(Pending p, long h) {
        NcclTransport.beginCapture(); // the NCCL communicator of the child's primary path, made on this thread
        Optional<Communicator> child;
        List<NcclComm> nccls;
        try {
            child = p.how.child(p.parent.comm);
        } finally {
            nccls = NcclTransport.endCapture();
        }
        return child.map(c -> new FacadeComm(h, c, nccls.size() == 1 ? nccls.get(0) : null, p.parent.backend,
                p.options.commName(), p.options.blocking())).orElse(null);
    }

    /**
     * At the outermost group end: this thread's recorded splits, each on a thread of its own, joined; the
     * first failure is thrown (the other ranks of a failed split fail with it, naming it).
     */
    static void runDeferred() {
        List<Pending> mine = DEFERRED.get();
        if (mine.isEmpty()) {
            return;
        }
        List<Pending> todo = new ArrayList<>(mine);
        mine.clear();
        if (todo.size() == 1) {
            todo.get(0).out.accept(run(todo.get(0), NcclFacade.newHandle()));
            return;
        }
        Throwable[] failures = new Throwable[todo.size()];
        Thread[] threads = new Thread[todo.size()];
        for (int i = 0; i < threads.length; i++) {
            int at = i;
            threads[i] = new Thread(() -> {
                try {
                    todo.get(at).out.accept(run(todo.get(at), NcclFacade.newHandle()));
                } catch (RuntimeException | Error e) {
                    failures[at] = e;
                }
            }, "flexlink-split-" + i);
            threads[i].setDaemon(true);
            threads[i].start();
        }
        try {
            for (Thread t : threads) {
                t.join(); // bounded: every split's rounds end after flexlink.initTimeout at the latest
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new FlexLinkException(Result.SYSTEM_ERROR, "ncclGroupEnd: interrupted while the group's "
                    + "ncclCommSplit calls ran");
        }
        FlexLinkException first = null;
        for (Throwable t : failures) {
            if (t == null) {
                continue;
            }
            FlexLinkException f = t instanceof FlexLinkException e ? e
                    : new FlexLinkException(Result.INTERNAL_ERROR, "ncclCommSplit failed: " + t, t);
            if (first == null) {
                first = f;
            } else {
                first.addSuppressed(f);
            }
        }
        if (first != null) {
            throw first;
        }
    }
}
