package io.flexlink.hier;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.launch.Groups;

/**
 * The two ends of a multi-node communicator before its close, NCCL's finalize and revoke: each once, and
 * never both (a second end is INVALID_ARGUMENT, as NCCL's double finalize or revoke after finalize).
 */
final class HierEnds {
    static final String FINALIZED = "finalized";
    static final String REVOKED = "revoked";

    /** {@link #FINALIZED} or {@link #REVOKED} once one began; null before. */
    private volatile String ended;

    /**
     * Begins {@code what}: refused when closed, when a finalize is inside a group (its wait would never see
     * the group's calls launch) and after either end; {@code usable} checks a finalize's communicator.
     */
    synchronized void begin(String what, boolean closed, Runnable usable, String who) {
        if (closed || (what.equals(FINALIZED) && Groups.active())) {
            throw new FlexLinkException(Result.INVALID_USAGE, who + ": " + what + ": " + (closed ? "closed"
                    : "inside a group"));
        }
        if (ended != null) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, who + ": " + ended + " already; only close() is left");
        }
        if (what.equals(FINALIZED)) {
            usable.run();
        }
        ended = what;
    }

    /** Throws INVALID_USAGE once an end began (a revoked communicator's calls are ncclInvalidUsage in NCCL). */
    void check(String who) {
        String end = ended;
        if (end != null) {
            throw new FlexLinkException(Result.INVALID_USAGE, who + ": the communicator was " + end
                    + "; only close() is left");
        }
    }

    /** Null unless revoked; then IN_PROGRESS until the last call's scratch is freed, SUCCESS after. */
    Result revokedResult(boolean freed) {
        return !REVOKED.equals(ended) ? null : freed ? Result.SUCCESS : Result.IN_PROGRESS;
    }
}
