package io.flexlink.cuda.bench;

import io.flexlink.runtime.Backend;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.PinnedMemory;
import io.flexlink.runtime.RuntimeEvent;
import io.flexlink.runtime.RuntimeStream;

/**
 * Plain concurrent copies on GPU 0, one device-to-host and one host-to-device of the same size on two streams: the
 * ceiling the PCIe path is held against. Kept open, so that a harness can time it between runs of the path
 * ({@link PathRatio}) as well as alone ({@link CudaMeasurements#copiesMillis}).
 */
final class CopyPair implements AutoCloseable {
    private final long bytes;
    private final RuntimeStream d2h;
    private final RuntimeStream h2d;
    private final RuntimeEvent start;
    private final RuntimeEvent mid;
    private final RuntimeEvent end;
    private final DeviceMemory from;
    private final DeviceMemory to;
    private final PinnedMemory hostTo;
    private final PinnedMemory hostFrom;

    CopyPair(Backend backend, long bytes) {
        this.bytes = bytes;
        d2h = backend.createStream(0, "bench.d2h");
        h2d = backend.createStream(0, "bench.h2d");
        start = backend.createEvent(0, true);
        mid = backend.createEvent(0, false);
        end = backend.createEvent(0, true);
        from = backend.allocate(0, bytes);
        to = backend.allocate(0, bytes);
        hostTo = backend.allocatePinned(bytes);
        hostFrom = backend.allocatePinned(bytes);
        CudaMeasurements.randomize(backend, from.address(), bytes, 1);
    }

    /** One run: ms from the first copy's start until both copies are done. */
    double millis() {
        d2h.record(start);
        h2d.waitEvent(start);
        d2h.copy(hostTo.deviceAddress(), from.address(), bytes);
        h2d.copy(to.address(), hostFrom.deviceAddress(), bytes);
        h2d.record(mid);
        d2h.waitEvent(mid);
        d2h.record(end);
        end.synchronize();
        return end.elapsedMillis(start);
    }

    @Override
    public void close() {
        d2h.close();
        h2d.close();
        start.close();
        mid.close();
        end.close();
        from.close();
        to.close();
        hostTo.close();
        hostFrom.close();
    }
}
