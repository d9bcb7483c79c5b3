package io.flexlink.cuda;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import org.bytedeco.cuda.global.nccl;
import org.bytedeco.cuda.nccl.ncclComm;
import org.bytedeco.javacpp.BytePointer;

/** NCCL result codes as {@link FlexLinkException}s: the same code, NCCL's text and its last error. */
final class NcclErrors {
    private NcclErrors() {
    }

    static void check(int rc, String what, ncclComm comm) {
        if (rc != nccl.ncclSuccess) {
            throw error(rc, what, comm);
        }
    }

    static FlexLinkException error(int rc, String what, ncclComm comm) {
        StringBuilder m = new StringBuilder(what).append(": ").append(text(rc));
        try {
            BytePointer last = nccl.ncclGetLastError(comm);
            String s = last == null ? "" : last.getString();
            if (!s.isBlank()) {
                m.append(" (").append(s.strip()).append(')');
            }
        } catch (RuntimeException | LinkageError e) {
            // the text is a bonus; the code is what callers act on
        }
        return new FlexLinkException(Result.fromCode(rc), m.toString());
    }

    static String text(int rc) {
        String s = null;
        try {
            BytePointer p = nccl.ncclGetErrorString(rc);
            s = p == null ? null : p.getString();
        } catch (RuntimeException | LinkageError e) {
            // NCCL cannot be loaded (a code from a test, or from a path without NCCL): FlexLink's text below
        }
        return (s != null ? s : Result.fromCode(rc).description()) + " (" + rc + ")";
    }
}
