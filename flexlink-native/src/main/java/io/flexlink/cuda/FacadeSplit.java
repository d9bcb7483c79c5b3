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
import org.bytedeco.javacpp.PointerPointer;

/**
 * {@code ncclCommSplit} behind {@link FlexNccl}: {@link Communicator#split} of the parent's FlexLink
 * communicator, the child registered under a handle of its own; {@code config} is not read (the child has
 * the parent's FlexLink configuration, as NCCL's child inherits with a NULL config). Outside a group the
 * calling thread's rank splits at once (every rank calls from its own thread, as NCCL requires there).
 * Inside a group NCCL defers the split to the outermost {@code ncclGroupEnd}, which is how one thread
 * splits the several ranks it drives; the facade does the same: the splits this thread recorded run there,
 * each on a thread of its own (they wait for each other), and {@code newcomm} stays NULL until then.
 */
final class FacadeSplit {
    /** One recorded split: the parent, the arguments, and where its handle goes. */
    private record Pending(FacadeComm parent, int color, int key, LongConsumer out) {
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

    /** ncclCommSplit; {@code out} receives the child's handle (0 for no color, and until the split is done). */
    static int split(ncclComm comm, int color, int key, LongConsumer out) {
        try {
            out.accept(0);
            FacadeComm parent = NcclFacade.lookup(comm);
            if (parent == null) {
                return ncclInvalidArgument;
            }
            Pending p = new Pending(parent, color, key, out);
            if (NcclFacade.groupDepth() > 0) {
                DEFERRED.get().add(p);
                return ncclSuccess;
            }
            run(p);
            return ncclSuccess;
        } catch (FlexLinkException e) {
            return NcclFacade.failed("ncclCommSplit", e);
        } catch (RuntimeException | LinkageError e) {
            return NcclFacade.internal("ncclCommSplit", e);
        }
    }

    private static void run(Pending p) {
        NcclTransport.beginCapture(); // the NCCL communicator of the child's primary path, made on this thread
        Optional<Communicator> child;
        List<NcclComm> nccls;
        try {
            child = p.parent.comm.split(p.color, p.key);
        } finally {
            nccls = NcclTransport.endCapture();
        }
        if (child.isPresent()) {
            p.out.accept(NcclFacade.register(child.get(), nccls.size() == 1 ? nccls.get(0) : null, p.parent.backend));
        }
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
            run(todo.get(0));
            return;
        }
        Throwable[] failures = new Throwable[todo.size()];
        Thread[] threads = new Thread[todo.size()];
        for (int i = 0; i < threads.length; i++) {
            int at = i;
            threads[i] = new Thread(() -> {
                try {
                    run(todo.get(at));
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
