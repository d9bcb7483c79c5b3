package io.flexlink.cuda;

import static io.flexlink.runtime.NativeMemory.UNSAFE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.PinnedMemory;
import io.flexlink.runtime.RowRuns;
import io.flexlink.runtime.RuntimeStream;
import java.nio.ByteBuffer;
import org.bytedeco.cuda.global.cudart;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Runs of rows as one {@code cudaMemcpy3DBatchAsync} ({@link BatchCopies}): the presets lay the operation out as
 * this backend writes it, the runs go as one batch (not a copy each), and each run's rows land at their pitch in
 * both directions (device to pinned host, pinned host to device), a single row without a pitch too, while the
 * bytes between and around them keep their poison; a batch on another device's stream leaves the caller's current
 * device and last error as they were (two GPUs).
 */
@Tag("gpu")
class BatchCopiesGpuTest {
    private static final int WIDTH = 1000;
    private static final int DEVICE_PITCH = 8192;
    private static final int HOST_PITCH = 1024;
    private static final byte POISON = (byte) 0xEE;
    static CudaBackend backend;

    @BeforeAll
    static void open() {
        backend = GpuTests.open();
    }

    @AfterAll
    static void close() {
        if (backend != null) {
            backend.close();
        }
    }

    @Test
    void thePresetsLayTheOperationOutAsTheBackendWritesIt() {
        assertTrue(BatchCopies.LAYOUT, "cudaMemcpy3DBatchOp at the offsets BatchCopies writes");
    }

    @Test
    void aSingleRowWithoutAPitchGoesInTheBatchAsItsWidth() {
        byte[] data = CudaBackendGpuTest.random(3 * WIDTH, 43);
        RuntimeStream s = backend.createStream(0, "test.row");
        try (DeviceMemory dev = backend.allocate(0, 3 * WIDTH); PinnedMemory host = backend.allocatePinned(4 * WIDTH)) {
            backend.upload(dev.address(), ByteBuffer.wrap(data));
            UNSAFE.setMemory(host.hostAddress(), 4 * WIDTH, POISON);
            RowRuns runs = new RowRuns();
            runs.add(host.deviceAddress(), 0, dev.address(), 0, WIDTH, 1); // a shared row: pitch 0, as a broadcast's
            runs.add(host.deviceAddress() + 2L * WIDTH, WIDTH, dev.address() + WIDTH, WIDTH, WIDTH, 2);
            runs.add(host.deviceAddress() + WIDTH, 0, dev.address(), 0, 0, 1); // no bytes: not a run at all
            assertEquals(2, runs.size());
            assertTrue(((CudaStream) s).copyRowRunsBatched(runs));
            s.synchronize();
            for (int b = 0; b < 4 * WIDTH; b++) {
                int row = b / WIDTH;
                byte want = row == 1 ? POISON : data[(row == 0 ? 0 : row - 1) * WIDTH + b % WIDTH];
                assertEquals(want, UNSAFE.getByte(host.hostAddress() + b), "byte " + b);
            }
        } finally {
            s.close();
        }
    }

    @Test
    void twoRunsFromTheDeviceAndBackLandRowByRow() {
        int deviceBytes = 8 * DEVICE_PITCH;
        int hostBytes = 8 * HOST_PITCH;
        byte[] data = CudaBackendGpuTest.random(deviceBytes, 41);
        RuntimeStream s = backend.createStream(0, "test.runs");
        try (DeviceMemory dev = backend.allocate(0, deviceBytes); DeviceMemory back = backend.allocate(0, deviceBytes);
             PinnedMemory host = backend.allocatePinned(hostBytes)) {
            backend.upload(dev.address(), ByteBuffer.wrap(data));
            backend.fill(back.address(), deviceBytes, POISON);
            UNSAFE.setMemory(host.hostAddress(), hostBytes, POISON);
            // device rows 0-2 to host rows 0-2, device rows 5-6 to host rows 4-5 (row 3 stays poisoned)
            RowRuns out = new RowRuns();
            out.add(host.deviceAddress(), HOST_PITCH, dev.address(), DEVICE_PITCH, WIDTH, 3);
            out.add(host.deviceAddress() + 4L * HOST_PITCH, HOST_PITCH, dev.address() + 5L * DEVICE_PITCH, DEVICE_PITCH,
                    WIDTH, 2);
            assertTrue(((CudaStream) s).copyRowRunsBatched(out), "one cudaMemcpy3DBatchAsync, not a copy per run");
            s.synchronize();
            int[] hostRowFrom = {0, 1, 2, -1, 5, 6, -1, -1};
            for (int r = 0; r < 8; r++) {
                for (int b = 0; b < HOST_PITCH; b++) {
                    byte want = hostRowFrom[r] >= 0 && b < WIDTH ? data[hostRowFrom[r] * DEVICE_PITCH + b] : POISON;
                    assertEquals(want, UNSAFE.getByte(host.hostAddress() + (long) r * HOST_PITCH + b),
                            "host row " + r + " byte " + b);
                }
            }
            // and back: host rows 4-5 to device rows 1-2, host rows 0-1 to device rows 6-7, from the pinned memory
            RowRuns in = new RowRuns();
            in.addFromHost(back.address() + DEVICE_PITCH, DEVICE_PITCH, host, 4L * HOST_PITCH, HOST_PITCH, WIDTH, 2);
            in.addFromHost(back.address() + 6L * DEVICE_PITCH, DEVICE_PITCH, host, 0, HOST_PITCH, WIDTH, 2);
            assertTrue(((CudaStream) s).copyRowRunsBatched(in));
            s.synchronize();
            byte[] got = new byte[deviceBytes];
            backend.download(ByteBuffer.wrap(got), back.address());
            int[] deviceRowFrom = {-1, 5, 6, -1, -1, -1, 0, 1};
            for (int r = 0; r < 8; r++) {
                for (int b = 0; b < DEVICE_PITCH; b++) {
                    byte want = deviceRowFrom[r] >= 0 && b < WIDTH ? data[deviceRowFrom[r] * DEVICE_PITCH + b] : POISON;
                    assertEquals(want, got[r * DEVICE_PITCH + b], "device row " + r + " byte " + b);
                }
            }
        } finally {
            s.close();
        }
    }

    @Test
    void aBatchOnAnotherDevicesStreamLeavesTheCallersDeviceAndLastErrorAlone() {
        assumeTrue(backend.deviceCount() >= 2, "needs two GPUs");
        byte[] data = CudaBackendGpuTest.random(4 * WIDTH, 47);
        RuntimeStream s = backend.createStream(1, "test.device1");
        try (DeviceMemory dev = backend.allocate(1, 4 * WIDTH); PinnedMemory host = backend.allocatePinned(4 * WIDTH)) {
            backend.upload(dev.address(), ByteBuffer.wrap(data));
            UNSAFE.setMemory(host.hostAddress(), 4 * WIDTH, POISON);
            RowRuns runs = new RowRuns();
            runs.add(host.deviceAddress(), WIDTH, dev.address() + 2L * WIDTH, WIDTH, WIDTH, 2);
            runs.add(host.deviceAddress() + 2L * WIDTH, WIDTH, dev.address(), WIDTH, WIDTH, 2);
            assertEquals(0, cudart.cudaSetDevice(0));
            assertEquals(0, cudart.cudaGetLastError());
            assertTrue(((CudaStream) s).copyRowRunsBatched(runs), "one batch on device 1's stream");
            int[] current = {-1};
            assertEquals(0, cudart.cudaGetDevice(current));
            assertEquals(0, current[0], "the caller's current device after a batch on device 1");
            assertEquals(0, cudart.cudaGetLastError(), "the runtime's last error after the batch");
            s.synchronize();
            for (int b = 0; b < 4 * WIDTH; b++) {
                int from = b < 2 * WIDTH ? b + 2 * WIDTH : b - 2 * WIDTH; // the two halves swapped
                assertEquals(data[from], UNSAFE.getByte(host.hostAddress() + b), "byte " + b);
            }
        } finally {
            s.close();
        }
    }
}
