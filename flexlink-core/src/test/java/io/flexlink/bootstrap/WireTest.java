package io.flexlink.bootstrap;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import java.nio.ByteBuffer;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** Frames are checked against what they declare before anything is allocated for them. */
class WireTest {
    @Test
    void aResultRoundTripsAndEveryCountIsChecked() throws Exception {
        byte[][] all = {{1, 2}, {}, {3}};
        byte[] packed = Wire.packAll(all);
        byte[][] back = Wire.unpackAll(packed, 3);
        for (int r = 0; r < 3; r++) {
            assertArrayEquals(all[r], back[r]);
        }
        assertTrue(assertThrows(Wire.ProtocolException.class, () -> Wire.unpackAll(packed, 2)).getMessage()
                .contains("a result of 3 ranks, expected 2"));
        byte[] lying = packed.clone();
        ByteBuffer.wrap(lying).putInt(4, Integer.MAX_VALUE); // rank 0 declares 2 GiB
        assertTrue(assertThrows(Wire.ProtocolException.class, () -> Wire.unpackAll(lying, 3)).getMessage()
                .contains("rank 0 declares 2147483647 bytes"));
        assertThrows(Wire.ProtocolException.class, () -> Wire.unpackAll(Arrays.copyOf(packed, packed.length - 1), 3));
        assertThrows(Wire.ProtocolException.class, () -> Wire.unpackAll(Arrays.copyOf(packed, packed.length + 1), 3));
        assertThrows(Wire.ProtocolException.class, () -> Wire.unpackAll(new byte[2], 3));
    }

    @Test
    void aHelloIsExactlyItsBytes() {
        byte[] token = new byte[8];
        byte[] secret = new byte[16];
        Arrays.fill(secret, (byte) 7);
        byte[] frame = ByteBuffer.allocate(Wire.HELLO_FRAME).putInt(Wire.HELLO).putInt(0).putInt(Wire.HELLO_PAYLOAD)
                .put(Wire.hello(token, secret, 4, 3)).array();
        Wire.Hello h = Wire.Hello.parse(frame);
        assertEquals(Wire.VERSION, h.version());
        assertEquals(4, h.nranks());
        assertEquals(3, h.rank());
        assertArrayEquals(secret, h.secret());
        assertNull(Wire.Hello.parse(Arrays.copyOf(frame, frame.length - 1)));
        byte[] badMagic = frame.clone();
        badMagic[Wire.HEADER_BYTES] ^= 1;
        assertNull(Wire.Hello.parse(badMagic));
        assertTrue(Wire.helloHeader(ByteBuffer.wrap(frame)));
        assertTrue(!Wire.helloHeader(ByteBuffer.wrap("GET / HTTP/1.1\r\n".getBytes())));
    }

    @Test
    void aFailureIsDescribedByItsCodeAndMessageBounded() {
        assertEquals("SYSTEM_ERROR: no room", Wire.describe(new FlexLinkException(Result.SYSTEM_ERROR, "no room")));
        assertEquals("IllegalStateException: x", Wire.describe(new IllegalStateException("x")));
        assertEquals("OutOfMemoryError", Wire.describe(new OutOfMemoryError()));
        assertTrue(Wire.describe(new RuntimeException("y".repeat(100_000))).length() < Wire.MAX_TEXT);
    }
}
