package io.flexlink.bench;

import io.flexlink.runtime.PinnedMemory;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;

/**
 * A call target whose calls are done marks written on the ranks' streams ({@link #enqueue} in each test), some
 * of them behind a gate in host memory that a stream of its own ({@link #opener}) opens: what the timed loop's
 * -z modes wait for, seen without any collective. Nothing to group, register or abort.
 */
abstract class GatedMarkingTarget implements CallTarget {
    final Workspace ws;
    final PinnedMemory marks;
    final PinnedMemory gate;
    /** Opens the gate: a stream of its own, so that no rank's own waits can hold it. Null without a gate. */
    final RuntimeStream opener;

    GatedMarkingTarget(Workspace ws, PinnedMemory marks, PinnedMemory gate, HostBackend backend) {
        this.ws = ws;
        this.marks = marks;
        this.gate = gate;
        this.opener = gate == null ? null : backend.createStream(0, "gate");
    }

    /** Each rank's stream, made by the host backend on its device, for a workspace of the -z tests. */
    static Workspace.StreamSource hostStreams(HostBackend backend) {
        return new Workspace.StreamSource() {
            @Override
            public RuntimeStream open(int rank, int device) {
                return backend.createStream(device, "z" + rank);
            }

            @Override
            public void close() {
            }
        };
    }

    @Override
    public String label() {
        return "marking";
    }

    @Override
    public void groupStart() {
    }

    @Override
    public void groupEnd() {
    }

    @Override
    public AutoCloseable registerBuffer(int r, long address, long bytes) {
        return null;
    }

    @Override
    public void abort() {
    }

    @Override
    public void close() {
        if (opener != null) {
            opener.close();
        }
    }
}
