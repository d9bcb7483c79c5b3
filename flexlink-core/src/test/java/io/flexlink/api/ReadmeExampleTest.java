package io.flexlink.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.ReduceOp;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The README's example runs as written (on the host backend here) and gives what its comment says. */
class ReadmeExampleTest {
    @Test
    void readmeExampleRunsAndIsTheOneInTheReadme() throws Exception {
        String readme = Files.readString(Path.of("..", "README.md"), StandardCharsets.UTF_8);
        assertTrue(readme.contains("FlexLink.groupStart();                     // one thread drives every rank"),
                "README example changed: update this test with it");
        // ---- from the README ----
        int ranks = 4, count = 1 << 20;
        Backend backend = FlexLink.backend();                             // CUDA when a GPU is there, else host
        Communicator[] comms = FlexLink.initAll(backend, 0, 1, 2, 3);     // like ncclCommInitAll
        RuntimeStream[] streams = new RuntimeStream[ranks];
        DeviceMemory[] buffers = new DeviceMemory[ranks];
        for (int r = 0; r < ranks; r++) {
            streams[r] = backend.createStream(r, "train");
            buffers[r] = backend.allocate(r, count * 4L);
            ByteBuffer data = ByteBuffer.allocateDirect(count * 4).order(ByteOrder.nativeOrder());
            for (int i = 0; i < count; i++) data.putFloat(4 * i, r + 1);
            backend.upload(buffers[r].address(), data);
        }
        FlexLink.groupStart();                     // one thread drives every rank: one group, as with NCCL
        for (int r = 0; r < ranks; r++) {
            comms[r].allReduce(buffers[r], buffers[r], count, DataType.FLOAT32, ReduceOp.SUM, streams[r]);
        }
        FlexLink.groupEnd();                       // enqueued; the streams run it
        for (int r = 0; r < ranks; r++) streams[r].synchronize();   // every element is now 1 + 2 + 3 + 4
        // ---- end ----
        for (int r = 0; r < ranks; r++) {
            ByteBuffer out = ByteBuffer.allocateDirect(count * 4).order(ByteOrder.nativeOrder());
            backend.download(out, buffers[r].address());
            for (int i = 0; i < count; i += 997) {
                assertEquals(10f, out.getFloat(4 * i), "rank " + r + " element " + i);
            }
            comms[r].close();
            streams[r].close();
            buffers[r].close();
        }
    }
}
