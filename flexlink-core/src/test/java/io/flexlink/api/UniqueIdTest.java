package io.flexlink.api;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.flexlink.FlexLinkException;
import io.flexlink.UniqueId;
import java.net.InetAddress;
import org.junit.jupiter.api.Test;

/** The 128-byte id: Base64 round trips keep the rendezvous address, port, token and secret. */
class UniqueIdTest {
    @Test
    void base64RoundTripKeepsAddressAndPort() throws Exception {
        for (String host : new String[] {"127.0.0.1", "10.1.2.3", "::1", "fe80::1:2"}) {
            byte[] addr = InetAddress.getByName(host).getAddress();
            UniqueId id = UniqueId.withAddress(addr, 29517);
            String text = id.toBase64();
            UniqueId back = UniqueId.fromBase64(text);
            assertEquals(id, back, host);
            assertEquals(UniqueId.BYTES, back.toBytes().length);
            assertArrayEquals(addr, back.address(), host);
            assertEquals(29517, back.port());
            assertArrayEquals(id.secret(), back.secret());
            assertEquals(id.token(), back.token());
            assertEquals(id, UniqueId.fromBytes(id.toBytes()));
        }
    }

    @Test
    void inProcessIdsHaveNoAddress() {
        UniqueId id = UniqueId.random();
        assertNull(id.address());
        assertEquals(0, id.port());
        assertNotEquals(id, UniqueId.random(), "fresh token and secret each time");
    }

    @Test
    void explicitTokenAndSecret() {
        byte[] token = {1, 2, 3, 4, 5, 6, 7, 8};
        byte[] secret = new byte[16];
        secret[15] = 9;
        UniqueId id = UniqueId.of(new byte[] {127, 0, 0, 1}, 65535, token, secret);
        assertArrayEquals(token, id.tokenBytes());
        assertEquals("0102030405060708", id.token());
        assertArrayEquals(secret, UniqueId.fromBase64(id.toBase64()).secret());
        assertEquals(65535, id.port());
        assertThrows(FlexLinkException.class, () -> UniqueId.of(null, 70000, token, secret));
        assertThrows(FlexLinkException.class, () -> UniqueId.of(null, 1, new byte[3], secret));
        assertThrows(FlexLinkException.class, () -> UniqueId.fromBase64("!!!"));
    }
}
