package io.flexlink.launch;

import io.flexlink.Collective;
import io.flexlink.path.CollectiveCall;
import io.flexlink.plan.CallPlan;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.PinnedMemory;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.ReusedScratch;
import java.util.ArrayList;
import java.util.List;

/**
 * PreMulSum's first step, before the fork: on the caller's stream, each rank's whole input is multiplied by
 * the scalar into scratch ({@code RuntimeStream.scale}: the type's precision, rounded once, as NCCL rounds each
 * product), and the call becomes a SUM of that scratch. Every path (NCCL or the host ring, PCIe, NVSHMEM) then
 * only sums, so each sees exactly the products NCCL would sum, NCCL's one-rank PreMulSum (which leaves the
 * tail unwritten, docs/design.md) and its fp8 refusal are never used, and a call may stay on the primary path
 * or be split without any path knowing the operation.
 *
 * <p>A host scalar is written by the stream itself into the call's own word of pinned memory right before the
 * scaling (two 32-bit writes for 8-byte types), so it travels in stream order, like NCCL's kernel argument: a
 * graph captures the value, and the operation may be destroyed while calls are queued. A device scalar is read
 * where it is when the scaling runs. Each group position has its own scratch and word (a group's calls are all
 * staged before any of them runs); a call waits until the previous call of its position stopped reading them,
 * since calls may come on different streams. Used under the communicator's lock.
 */
final class PreScaledInputs implements AutoCloseable {
    private final Backend backend;
    private final int device;
    private final int ranks;
    private final List<Slot> slots = new ArrayList<>();

    private static final class Slot implements AutoCloseable {
        final ReusedScratch input;
        final PinnedMemory scalar;

        Slot(Backend backend, int device) {
            this.input = new ReusedScratch(backend, device);
            this.scalar = backend.allocatePinned(8);
        }

        @Override
        public void close() {
            input.close();
            scalar.close();
        }
    }

    PreScaledInputs(Backend backend, int device, int ranks) {
        this.backend = backend;
        this.device = device;
        this.ranks = ranks;
    }

    /** Scales {@code p}'s input (a PreMulSum call) into its position's scratch; the call then sums that. */
    void stage(CallPlan p) {
        CollectiveCall c = p.call;
        while (slots.size() <= p.index) {
            slots.add(new Slot(backend, device)); // once per group position, never in a steady state
        }
        Slot s = slots.get(p.index);
        RuntimeStream stream = c.stream;
        long elements = c.collective == Collective.REDUCE_SCATTER ? c.count * ranks : c.count;
        int size = c.type.size();
        // the scalar's word is this position's too: the same wait keeps it from being rewritten under a reader
        long dst = s.input.fill(elements * size, stream, Launcher.captured(p));
        long scalar = c.scalarAddress;
        if (scalar == 0) {
            stream.writeValue32(s.scalar, 0, (int) c.scalarBits); // little-endian: the element's low bytes first
            if (size == 8) {
                stream.writeValue32(s.scalar, 4, (int) (c.scalarBits >>> 32));
            }
            scalar = s.scalar.deviceAddress();
        }
        stream.scale(dst, c.send, elements, c.type, scalar, 0);
        c.send = dst;
        p.preScaled = true;
    }

    /** After every path's work of {@code p} is on (or joined into) the caller's stream. */
    void done(CallPlan p) {
        if (p.preScaled) {
            slots.get(p.index).input.read(p.call.stream, Launcher.captured(p));
        }
    }

    @Override
    public void close() {
        for (Slot s : slots) {
            s.close();
        }
        slots.clear();
    }
}
