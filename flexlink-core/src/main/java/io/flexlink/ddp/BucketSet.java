package io.flexlink.ddp;

import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeEvent;
import io.flexlink.runtime.RuntimeStream;
import java.util.List;

/**
 * The device side of one {@link BucketPlan}: the flat buffers of the buckets that are not reduced in place
 * (one allocation), and the per-step progress (gradients still missing per bucket, the next bucket to
 * launch). Everything it enqueues goes to the communication stream; nothing here waits on the host.
 * Allocated once per plan and reused every step.
 */
final class BucketSet implements AutoCloseable {
    /** Flat buffers start on this boundary, so that reductions over them can use vector loads. */
    static final long ALIGN = 256;

    final BucketPlan plan;
    private final List<Parameter> params;
    private final GradientCast cast;
    private final DeviceMemory arena;
    /** Address each bucket's AllReduce works on: its flat buffer, or its gradients' own range. */
    private final long[] target;
    private final boolean[] inPlace;
    private final DataType[] wire;
    private final long[] elements;
    private final RuntimeEvent[] done;
    private final int[] pending;
    private int next;

    BucketSet(Backend backend, int device, List<Parameter> params, BucketPlan plan, GradientCast cast,
              RuntimeEvent[] done) {
        this.plan = plan;
        this.params = params;
        this.cast = cast;
        this.done = done;
        int n = plan.buckets();
        target = new long[n];
        inPlace = new boolean[n];
        wire = new DataType[n];
        elements = new long[n];
        pending = new int[n];
        long arenaBytes = 0;
        long[] offset = new long[n];
        for (int b = 0; b < n; b++) {
            // a cast needs a buffer of the narrow type, so it never reduces in place
            inPlace[b] = plan.inPlace[b] && cast == null;
            wire[b] = cast == null ? plan.type[b] : cast.wireType();
            elements[b] = plan.bytes[b] / plan.type[b].size();
            if (!inPlace[b]) {
                offset[b] = arenaBytes;
                arenaBytes += (elements[b] * wire[b].size() + ALIGN - 1) / ALIGN * ALIGN;
            }
        }
        arena = arenaBytes == 0 ? null : backend.allocate(device, arenaBytes);
        for (int b = 0; b < n; b++) {
            target[b] = inPlace[b] ? plan.base[b] : arena.address() + offset[b];
        }
        startStep();
    }

    /** Every bucket waits for all of its gradients again. */
    void startStep() {
        for (int b = 0; b < pending.length; b++) {
            pending[b] = plan.members[b].length;
        }
        next = 0;
    }

    int buckets() {
        return pending.length;
    }

    boolean inPlace(int b) {
        return inPlace[b];
    }

    DataType wireType(int b) {
        return wire[b];
    }

    /** Where gradient {@code p} lives in its bucket's flat buffer. */
    private long slot(int p) {
        int b = plan.bucketOf[p];
        return target[b] + plan.elementOffset[p] * wire[b].size();
    }

    /** Gradient {@code p} is ready on {@code s} (which already waits for it): moves it into its bucket. */
    void arrive(int p, RuntimeStream s) {
        int b = plan.bucketOf[p];
        if (!inPlace[b]) {
            Parameter q = params.get(p);
            if (cast != null) {
                cast.toWire(s, q.gradient().address(), slot(p), q.count());
            } else {
                s.copy(slot(p), q.gradient().address(), q.bytes());
            }
        }
        pending[b]--;
    }

    /** Parameter {@code p} took no part in this step: it contributes zeros. */
    void arriveUnused(int p, RuntimeStream s, ConstantBuffers constants) {
        int b = plan.bucketOf[p];
        Parameter q = params.get(p);
        if (inPlace[b]) {
            constants.zero(s, q.gradient().address(), q.bytes());
        } else {
            constants.zero(s, slot(p), q.count() * wire[b].size());
        }
        pending[b]--;
    }

    /**
     * Launches, in bucket order, every bucket that is complete and whose predecessors have all been
     * launched. A bucket complete before an earlier one waits for it: the launch order is the plan's on
     * every rank, whatever order the gradients arrive in.
     */
    void launchReady(Communicator comm, RuntimeStream s, DdpOptions options, ConstantBuffers constants) {
        while (next < pending.length && pending[next] == 0) {
            launch(next++, comm, s, options, constants);
        }
    }

    /** True once every bucket of this step has been launched. */
    boolean allLaunched() {
        return next == pending.length;
    }

    private void launch(int b, Communicator comm, RuntimeStream s, DdpOptions options, ConstantBuffers constants) {
        long at = target[b];
        comm.allReduce(at, at, elements[b], wire[b], options.op(), s);
        if (cast != null) {
            for (int p : plan.members[b]) {
                Parameter q = params.get(p);
                cast.fromWire(s, slot(p), q.gradient().address(), q.count());
                constants.scale(s, q.gradient().address(), q.count(), q.type());
            }
        } else {
            constants.scale(s, at, elements[b], plan.type[b]);
            if (!inPlace[b]) {
                for (int p : plan.members[b]) {
                    Parameter q = params.get(p);
                    s.copy(q.gradient().address(), slot(p), q.bytes());
                }
            }
        }
        s.record(done[b]);
    }

    /** Makes {@code s} wait for every bucket of this step. */
    void joinInto(RuntimeStream s) {
        for (int b = 0; b < pending.length; b++) {
            s.waitEvent(done[b]);
        }
    }

    @Override
    public void close() {
        if (arena != null) {
            arena.close();
        }
    }
}
