package io.flexlink.bench;

import io.flexlink.Registration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * -R 1, nccl-tests' local registration: every local rank's send and receive buffers registered with each target
 * that runs on them (FlexLink's communicators through {@code Communicator.register}, which passes the buffer on to
 * NCCL where NCCL is the primary path; the raw NCCL baseline through ncclCommRegister; the host ring has none),
 * once, after the targets and the workspace are made, as nccl-tests registers after allocating. Closed before the
 * workspace frees the buffers, newest first.
 */
final class LocalRegistration implements AutoCloseable {
    /** One target's part: how many buffers it was given, and how many its transport (NCCL) registered too. */
    static final class Part {
        final String target;
        final int buffers;
        final int withTransport;

        Part(String target, int buffers, int withTransport) {
            this.target = target;
            this.buffers = buffers;
            this.withTransport = withTransport;
        }
    }

    final List<Part> parts = new ArrayList<>();
    private final List<AutoCloseable> undo = new ArrayList<>();

    private LocalRegistration() {
    }

    /** Registers the buffers of {@code ws} with each non-null target; on a failure undoes what it did. */
    static LocalRegistration of(Workspace ws, CallTarget... targets) {
        LocalRegistration reg = new LocalRegistration();
        try {
            for (CallTarget t : targets) {
                if (t != null) {
                    reg.register(t, ws);
                }
            }
            return reg;
        } catch (RuntimeException | Error e) {
            reg.close();
            throw e;
        }
    }

    private void register(CallTarget t, Workspace ws) {
        int buffers = 0;
        int withTransport = 0;
        for (int r = 0; r < ws.ranks(); r++) {
            for (io.flexlink.Buffer b : ws.buffers(r)) {
                AutoCloseable u = t.registerBuffer(r, b.address(), b.byteSize());
                buffers++;
                if (u != null) {
                    undo.add(u);
                    withTransport += u instanceof Registration g ? (g.withPrimary() ? 1 : 0) : 1;
                }
            }
        }
        parts.add(new Part(t.label(), buffers, withTransport));
    }

    /** The header's words: each target, its buffers, and who holds them. */
    String note() {
        StringBuilder sb = new StringBuilder("send and receive buffers registered with ");
        for (int i = 0; i < parts.size(); i++) {
            Part p = parts.get(i);
            sb.append(i == 0 ? "" : "; ").append(String.format(Locale.ROOT, "%s (%d buffer%s, %d with NCCL)",
                    p.target, p.buffers, p.buffers == 1 ? "" : "s", p.withTransport));
        }
        return sb.toString();
    }

    /** Deregisters everything, newest first; best effort (a failed run has already reported why). */
    @Override
    public void close() {
        for (int i = undo.size() - 1; i >= 0; i--) {
            try {
                undo.get(i).close();
            } catch (Exception e) {
                // the run's own failure, if any, is what gets reported
            }
        }
        undo.clear();
    }
}
