package io.flexlink.bootstrap;

import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.ReduceOp;
import io.flexlink.UniqueId;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * A second JVM for the tests of ids any process may join ({@link LobbyProcessTest}), on the host backend
 * configured by the environment. Modes:
 * <ul>
 *   <li>{@code make}: makes an id ({@link FlexLink#getUniqueIdForProcesses}), prints {@code ID <base64>}, and
 *   exits once its standard input ends (the test decides how long the id's maker lives);</li>
 *   <li>{@code rank BASE64 N R}: rank R of N over that id, one checked AllReduce ({@link #allReduce});
 *   prints {@code WRONG <count>}.</li>
 * </ul>
 * Failures print {@code ERROR <message>} and exit 2.
 */
public final class LobbyMain {
    static final long COUNT = 70_001;

    private LobbyMain() {
    }

    public static void main(String[] args) throws Exception {
        int code = 0;
        try {
            if (args[0].equals("make")) {
                System.out.println("ID " + FlexLink.getUniqueIdForProcesses(FlexLinkConfig.fromEnvironment()).toBase64());
                System.out.flush();
                while (System.in.read() >= 0) {
                    // until the test closes our input
                }
            } else {
                UniqueId id = UniqueId.fromBase64(args[1]);
                int n = Integer.parseInt(args[2]);
                int r = Integer.parseInt(args[3]);
                try (Communicator c = FlexLink.initRank(n, id, r, r)) {
                    System.out.println("WRONG " + allReduce(FlexLink.backend(), c));
                }
            }
        } catch (RuntimeException e) {
            System.out.println("ERROR " + e.getMessage());
            code = 2;
        }
        System.out.flush();
        System.exit(code);
    }

    /**
     * An INT32 SUM AllReduce of {@link #COUNT} elements, rank r's element i being {@code (r + 1) * 7919 + i},
     * into an output poisoned with -1; returns how many output elements differ from the sum over the ranks.
     */
    static long allReduce(Backend backend, Communicator c) {
        int n = c.size();
        long bytes = COUNT * 4;
        ByteBuffer b = ByteBuffer.allocateDirect((int) bytes).order(ByteOrder.nativeOrder());
        try (DeviceMemory send = backend.allocate(c.device(), bytes);
             DeviceMemory recv = backend.allocate(c.device(), bytes);
             RuntimeStream s = backend.createStream(c.device(), "lobby-main")) {
            for (int i = 0; i < COUNT; i++) {
                b.putInt(i * 4, -1);
            }
            backend.upload(recv.address(), b);
            for (int i = 0; i < COUNT; i++) {
                b.putInt(i * 4, (c.rank() + 1) * 7919 + i);
            }
            backend.upload(send.address(), b);
            c.allReduce(send.address(), recv.address(), COUNT, DataType.INT32, ReduceOp.SUM, s);
            s.synchronize();
            backend.download(b, recv.address());
            long wrong = 0;
            for (int i = 0; i < COUNT; i++) {
                int want = 7919 * n * (n + 1) / 2 + n * i;
                if (b.getInt(i * 4) != want) {
                    wrong++;
                }
            }
            return wrong;
        }
    }
}
