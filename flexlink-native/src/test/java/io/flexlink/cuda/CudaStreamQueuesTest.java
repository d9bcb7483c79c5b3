package io.flexlink.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** The hardware queues per device that the CUDA backend reads from {@code CUDA_DEVICE_MAX_CONNECTIONS}, as CUDA does. */
class CudaStreamQueuesTest {
    @Test
    void unsetOrUnusableIsCudasDefaultOfEight() {
        assertEquals(8, CudaBackend.hardwareQueues(null));
        assertEquals(8, CudaBackend.hardwareQueues("0"));
        assertEquals(8, CudaBackend.hardwareQueues("-4"));
        assertEquals(8, CudaBackend.hardwareQueues("many"));
        assertEquals(8, CudaBackend.hardwareQueues("64"), "out of CUDA's documented 1 to 32");
    }

    @Test
    void aSettingFromOneToThirtyTwoCounts() {
        assertEquals(1, CudaBackend.hardwareQueues("1"));
        assertEquals(16, CudaBackend.hardwareQueues(" 16 "));
        assertEquals(32, CudaBackend.hardwareQueues("32"));
    }
}
