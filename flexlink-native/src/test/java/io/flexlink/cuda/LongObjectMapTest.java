package io.flexlink.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class LongObjectMapTest {

    @Test
    void behavesLikeAHashMap() {
        LongObjectMap<String> m = new LongObjectMap<>();
        Map<Long, String> ref = new HashMap<>();
        SplittableRandom r = new SplittableRandom(7);
        for (int i = 0; i < 5000; i++) {
            long k = r.nextInt(300) + 1L + (r.nextBoolean() ? NcclFacade.HANDLE_TAG : 0);
            if (r.nextInt(3) == 0) {
                assertEquals(ref.remove(k), m.remove(k));
            } else {
                String v = "v" + i;
                assertEquals(ref.put(k, v), m.put(k, v));
            }
            assertEquals(ref.size(), m.size());
        }
        for (Map.Entry<Long, String> e : ref.entrySet()) {
            assertEquals(e.getValue(), m.get(e.getKey()));
        }
        assertNull(m.get(123_456_789L));
        assertEquals(ref.size(), m.values().size());
        assertThrows(IllegalArgumentException.class, () -> m.put(0, "x"));
    }
}
