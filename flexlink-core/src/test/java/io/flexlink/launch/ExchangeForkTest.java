package io.flexlink.launch;

import static io.flexlink.testing.Downloads.download;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.ReduceOp;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
import io.flexlink.testing.EventTrace;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * A group of one communicator with a split collective on one stream and its sends and receives on another (NCCL
 * allows each call its stream): each call's path work is forked off its own stream. The streams' records and waits
 * are traced as they are enqueued, and each path stream's wait for a caller's record must find the last record made
 * on the stream of the call it belongs to; the data must arrive.
 */
class ExchangeForkTest {
    private static final long COUNT = 20_000;

    @Test
    void theTransfersPathWorkIsForkedOffTheTransfersStreamAndTheCollectivesOffItsOwn() {
        FlexLinkConfig config = FlexLinkConfig.builder().set(FlexLinkConfig.PATHS, "pcie")
                .set(FlexLinkConfig.MIN_SPLIT_BYTES, "0").set(FlexLinkConfig.CHUNK_BYTES, "16K")
                .set(FlexLinkConfig.SLOTS, "2").set(FlexLinkConfig.TUNING_CACHE, "off").build();
        EventTrace traced;
        try (HostBackend host = new HostBackend(config)) {
            traced = new EventTrace(host);
            Communicator[] comms = FlexLink.initAll(traced, config, 0, 1);
            RuntimeStream[] collective = {traced.createStream(0, "user.a0"), traced.createStream(1, "user.a1")};
            RuntimeStream[] transfers = {traced.createStream(0, "user.b0"), traced.createStream(1, "user.b1")};
            DeviceMemory[] in = new DeviceMemory[2];
            DeviceMemory[] sum = new DeviceMemory[2];
            DeviceMemory[] moved = new DeviceMemory[2];
            try {
                for (int r = 0; r < 2; r++) {
                    in[r] = host.allocate(r, COUNT * 4);
                    sum[r] = host.allocate(r, COUNT * 4);
                    moved[r] = host.allocate(r, COUNT * 4);
                    host.upload(in[r].address(), ints(r));
                    host.fill(sum[r].address(), COUNT * 4, (byte) 0xA5);
                    host.fill(moved[r].address(), COUNT * 4, (byte) 0xA5);
                }
                FlexLink.groupStart();
                try {
                    for (int r = 0; r < 2; r++) {
                        comms[r].allReduce(in[r].address(), sum[r].address(), COUNT, DataType.INT32, ReduceOp.SUM,
                                collective[r]);
                    }
                    comms[0].send(in[0].address(), COUNT, DataType.INT32, 1, transfers[0]);
                    comms[1].recv(moved[1].address(), COUNT, DataType.INT32, 0, transfers[1]);
                } finally {
                    FlexLink.groupEnd();
                }
                for (int r = 0; r < 2; r++) {
                    collective[r].synchronize();
                    transfers[r].synchronize();
                }
                ByteBuffer want0 = ints(0);
                ByteBuffer want1 = ints(1);
                for (int r = 0; r < 2; r++) {
                    ByteBuffer got = download(host, sum[r]);
                    for (int i = 0; i < COUNT; i++) {
                        assertEquals(want0.getInt(4 * i) + want1.getInt(4 * i), got.getInt(4 * i), "sum " + r + "@" + i);
                    }
                }
                assertEquals(want0, download(host, moved[1]), "what rank 0 sent");
            } finally {
                for (Communicator c : comms) {
                    c.close();
                }
                for (int r = 0; r < 2; r++) {
                    collective[r].close();
                    transfers[r].close();
                    for (DeviceMemory m : new DeviceMemory[] {in[r], sum[r], moved[r]}) {
                        if (m != null) {
                            m.close();
                        }
                    }
                }
            }
        }
        for (int r = 0; r < 2; r++) {
            assertEquals(Set.of("user.a" + r, "user.b" + r), traced.streamsAt(traced.forks(r)),
                    "the callers' streams whose records rank " + r + "'s path streams wait for");
        }
    }

    private static ByteBuffer ints(int rank) {
        ByteBuffer b = ByteBuffer.allocateDirect((int) COUNT * 4).order(ByteOrder.nativeOrder());
        for (int i = 0; i < COUNT; i++) {
            b.putInt(4 * i, rank * 1_000_003 + i * 7 + 1);
        }
        return b;
    }
}
