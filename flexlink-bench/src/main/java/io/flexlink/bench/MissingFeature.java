package io.flexlink.bench;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;

/**
 * nccl-tests options whose feature FlexLink's core does not have yet. Each is parsed with nccl-tests'
 * meaning and refused with a message that names what is missing (exit code 2), so that a script written
 * for nccl-tests fails loudly instead of measuring something else. When the core gains a feature, its
 * entry goes and the option is wired where its seam is (see each constant).
 */
enum MissingFeature {
    /**
     * -R 2: NCCL's symmetric windows. Seam: {@link LocalRegistration}, where -R 1 registers every workspace buffer;
     * a window registration (Communicator.registerWindow) would be made there, once Workspace allocates with
     * NCCL's allocator (symmetric windows need ncclMemAlloc'd memory).
     */
    SYMMETRIC_REGISTRATION("-R 2", "symmetric registration (ncclCommWindowRegister with NCCL_WIN_COLL_SYMMETRIC) is "
            + "not available in flexlink-perf: Communicator.registerWindow exists, but the workspace's buffers come "
            + "from the backend's allocator and NCCL's symmetric windows need memory from ncclMemAlloc; use -R 1 "
            + "(local registration, ncclCommRegister) or -R 0");

    private final String option;
    private final String message;

    MissingFeature(String option, String message) {
        this.option = option;
        this.message = message;
    }

    /** The refusal: INVALID_ARGUMENT, which the tool reports in one line with exit code 2. */
    FlexLinkException refusal() {
        return new FlexLinkException(Result.INVALID_ARGUMENT, option + ": " + message);
    }
}
