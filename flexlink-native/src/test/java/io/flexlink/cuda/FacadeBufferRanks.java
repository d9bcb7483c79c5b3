package io.flexlink.cuda;

import static io.flexlink.cuda.FlexNccl.ncclCommDestroy;

import io.flexlink.Communicator;
import io.flexlink.FlexLink;
import io.flexlink.runtime.DeviceMemory;
import org.bytedeco.cuda.nccl.ncclComm;
import org.bytedeco.javacpp.Pointer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * What the facade's CPU tests of buffer registration and windows share: two host-backend ranks under blocking
 * facade handles, 4096 bytes of memory on each rank's device, and pointers made from raw addresses.
 */
abstract class FacadeBufferRanks extends FacadeHostRanks {
    Communicator[] world;
    ncclComm[] h;
    DeviceMemory[] mem;

    @BeforeEach
    void makeRanks() {
        world = FlexLink.initAll(backend, CONFIG, 0, 1);
        h = handles(world, true);
        mem = new DeviceMemory[] {backend.allocate(0, 4096), backend.allocate(1, 4096)};
    }

    @AfterEach
    void destroyRanks() {
        for (ncclComm c : h) {
            ncclCommDestroy(c);
        }
        for (DeviceMemory m : mem) {
            m.close();
        }
    }

    static Pointer at(long address) {
        Pointer p = new Pointer();
        NcclFacade.setAddress(p, address);
        return p;
    }
}
