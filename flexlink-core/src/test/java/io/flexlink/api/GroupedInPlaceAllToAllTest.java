package io.flexlink.api;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;

/**
 * Two in-place AlltoAlls of one communicator in one group on two ranks, every element of both outputs checked.
 * Each call's input is copied aside first; NCCL launches a group's calls at its end, after every copy, so each
 * call has its own copy (GroupedInPlaceGpuTest shows why on NCCL; the host ring runs each call in turn, where
 * one copy would also do).
 */
class GroupedInPlaceAllToAllTest {
    static final int RANKS = 2;
    static final int COUNT = 1000;

    @Test
    void twoInPlaceAllToAllsInOneGroupEachSendTheirOwnInput() {
        FlexLinkConfig config = FlexLinkConfig.builder().set(FlexLinkConfig.PATHS, "primary").build();
        try (HostBackend backend = new HostBackend(config)) {
            Communicator[] comms = FlexLink.initAll(backend, config, new int[RANKS]);
            RuntimeStream[] s = new RuntimeStream[RANKS];
            DeviceMemory[][] bufs = new DeviceMemory[2][RANKS];
            long bytes = 4L * COUNT * RANKS;
            for (int r = 0; r < RANKS; r++) {
                s[r] = backend.createStream(0, "user.r" + r);
                for (int call = 0; call < 2; call++) {
                    bufs[call][r] = backend.allocate(0, bytes);
                    backend.upload(bufs[call][r].address(), input(call, r));
                }
            }
            FlexLink.groupStart();
            for (int r = 0; r < RANKS; r++) {
                for (int call = 0; call < 2; call++) {
                    long a = bufs[call][r].address();
                    comms[r].allToAll(a, a, COUNT, DataType.INT32, s[r]);
                }
            }
            FlexLink.groupEnd();
            for (int r = 0; r < RANKS; r++) {
                s[r].synchronize();
                for (int call = 0; call < 2; call++) {
                    ByteBuffer got = ByteBuffer.allocateDirect((int) bytes).order(ByteOrder.nativeOrder());
                    backend.download(got, bufs[call][r].address());
                    for (int from = 0; from < RANKS; from++) {
                        for (int i = 0; i < COUNT; i++) {
                            // block `from` of rank r's output: what rank `from` sent to r
                            assertEquals(value(call, from, r, i), got.getInt(4 * (from * COUNT + i)),
                                    "call " + call + ", rank " + r + ", from " + from + ", element " + i);
                        }
                    }
                }
            }
            for (int r = 0; r < RANKS; r++) {
                for (int call = 0; call < 2; call++) {
                    bufs[call][r].close();
                }
                comms[r].close();
                s[r].close();
            }
        }
    }

    /** Rank {@code r}'s input of call {@code call}: block {@code to} holds what it sends to rank {@code to}. */
    private static ByteBuffer input(int call, int r) {
        ByteBuffer b = ByteBuffer.allocateDirect(4 * COUNT * RANKS).order(ByteOrder.nativeOrder());
        for (int to = 0; to < RANKS; to++) {
            for (int i = 0; i < COUNT; i++) {
                b.putInt(4 * (to * COUNT + i), value(call, r, to, i));
            }
        }
        return b;
    }

    private static int value(int call, int from, int to, int i) {
        return 1_000_000 * (call + 1) + 10_000 * from + 1000 * to + i;
    }
}
