package example;

import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.ReduceOp;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The README's program ("Using it"), as a user's project runs it: four ranks driven by one thread, one
 * grouped AllReduce, every element checked. Run with {@code -Dflexlink.backend=host} where there is no
 * GPU; with {@code -Dflexlink.share=pcie=0.25 -Dflexlink.minSplitBytes=0} a quarter of the buffer goes
 * over the PCIe path's staging protocol too. Exits 1 on a wrong element.
 */
public final class HostAllReduce {
    private HostAllReduce() {
    }

    public static void main(String[] args) {
        int ranks = 4;
        int count = args.length > 0 ? Integer.parseInt(args[0]) : 1 << 20;
        Backend backend = FlexLink.backend();
        Communicator[] comms = FlexLink.initAll(backend, 0, 1, 2, 3);
        RuntimeStream[] streams = new RuntimeStream[ranks];
        DeviceMemory[] buffers = new DeviceMemory[ranks];
        for (int r = 0; r < ranks; r++) {
            streams[r] = backend.createStream(r, "train");
            buffers[r] = backend.allocate(r, count * 4L);
            ByteBuffer data = ByteBuffer.allocateDirect(count * 4).order(ByteOrder.nativeOrder());
            for (int i = 0; i < count; i++) {
                data.putFloat(4 * i, r + 1);
            }
            backend.upload(buffers[r].address(), data);
        }
        FlexLink.groupStart();
        for (int r = 0; r < ranks; r++) {
            comms[r].allReduce(buffers[r], buffers[r], count, DataType.FLOAT32, ReduceOp.SUM, streams[r]);
        }
        FlexLink.groupEnd();
        long wrong = 0;
        ByteBuffer out = ByteBuffer.allocateDirect(count * 4).order(ByteOrder.nativeOrder());
        for (int r = 0; r < ranks; r++) {
            streams[r].synchronize();
            out.clear();
            backend.download(out, buffers[r].address());
            for (int i = 0; i < count; i++) {
                if (out.getFloat(4 * i) != 1 + 2 + 3 + 4) {
                    wrong++;
                }
            }
        }
        String paths = comms[0].stats().paths().toString();
        for (int r = 0; r < ranks; r++) {
            comms[r].close();
            streams[r].close();
            buffers[r].close();
        }
        backend.close();
        System.out.println("HostAllReduce: " + ranks + " ranks on the " + backend.name() + " backend, " + count
                + " floats each, " + wrong + " wrong elements; " + paths);
        System.exit(wrong == 0 ? 0 : 1);
    }
}
