package io.flexlink.cuda.bench;

import io.flexlink.config.FlexLinkConfig;
import io.flexlink.cuda.CudaBackend;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.PinnedMemory;
import io.flexlink.runtime.RuntimeStream;
import java.util.ArrayList;
import java.util.List;

/**
 * Which streams of one device CUDA puts in one hardware queue. Stream A waits for a host word that only the host
 * writes; stream B, made after A with {@code gap} other streams made between them, writes another word. Where B's
 * write does not land while A waits, the two share a queue (B's work sits behind A's wait). The streams between
 * are either closed at once or kept open until the check, which tells whether CUDA deals queues out by creation
 * count or by the streams alive. In a second pair of rounds A copies in after its wait and B copies out before its
 * write, as a receive stream and a peer's send stream do (copies may travel in queues of their own). Usage: {@code StreamAliasProbe [maxGap]}; {@code CUDA_DEVICE_MAX_CONNECTIONS}
 * as the process was started.
 */
public final class StreamAliasProbe {
    private static final long POLL_NANOS = 100_000_000L;

    private StreamAliasProbe() {
    }

    public static void main(String[] args) {
        int maxGap = args.length > 0 ? Integer.parseInt(args[0]) : 40;
        CudaBackend backend = CudaBackend.open(FlexLinkConfig.fromEnvironment());
        try (PinnedMemory words = backend.allocatePinned(4096); DeviceMemory device = backend.allocate(0, 4096)) {
            words.writeCounter(0, 0);
            words.writeCounter(64, 0);
            System.out.println("# stream alias probe on " + backend.topology().describe() + ", "
                    + backend.streamQueues() + " hardware queues per device");
            int v = 0;
            for (int variant = 0; variant < 4; variant++) {
                boolean keepOpen = (variant & 1) != 0;
                boolean copies = (variant & 2) != 0;
                StringBuilder shared = new StringBuilder();
                for (int gap = 0; gap <= maxGap; gap++) {
                    v++;
                    List<RuntimeStream> between = new ArrayList<>();
                    RuntimeStream a = backend.createStream(0, "alias.a");
                    for (int i = 0; i < gap; i++) {
                        RuntimeStream s = backend.createStream(0, "alias.between");
                        if (keepOpen) {
                            between.add(s);
                        } else {
                            s.close();
                        }
                    }
                    RuntimeStream b = backend.createStream(0, "alias.b");
                    a.waitValue32(words, 0, v);
                    if (copies) {
                        // as a receive stream and a peer's send stream: a copy in after A's wait, a copy out before B's write
                        a.copy(device.address(), words.deviceAddress() + 128, 64);
                        b.copy(words.deviceAddress() + 256, device.address() + 64, 64);
                    }
                    b.writeValue32(words, 64, v);
                    long start = System.nanoTime();
                    while (words.readCounter(64) < v && System.nanoTime() - start < POLL_NANOS) {
                        Thread.onSpinWait();
                    }
                    boolean held = words.readCounter(64) < v;
                    words.writeCounter(0, v); // lets A go, and B behind it
                    a.synchronize();
                    b.synchronize();
                    if (held) {
                        shared.append(' ').append(gap);
                    }
                    a.close();
                    b.close();
                    between.forEach(RuntimeStream::close);
                }
                System.out.println((copies ? "A waits, then copies in; B copies out, then writes" : "A waits; B writes")
                        + (keepOpen ? ", streams between kept open" : ", streams between closed at once")
                        + ": B held behind A at gaps" + (shared.length() == 0 ? " (none)" : shared));
            }
        } finally {
            backend.close();
        }
    }
}
