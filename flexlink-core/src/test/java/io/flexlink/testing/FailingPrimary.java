package io.flexlink.testing;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.ForwardingBackend;
import io.flexlink.runtime.PrimaryComm;
import io.flexlink.runtime.PrimaryTransport;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A backend whose primary communicators refuse their AllReduce enqueues (UNHANDLED_CUDA_ERROR, as NCCL's refusal
 * reads) while {@code failures} lasts, one per refusal across all ranks; the communicators stay usable. Its primary
 * transport's group end can fail too: while {@code endFailures} lasts, an end ends the group, runs
 * {@code beforeEndFailure} (an abort from elsewhere, say) and then fails.
 */
public final class FailingPrimary extends ForwardingBackend {
    private final AtomicInteger failures;
    private final AtomicInteger endFailures;
    private final Runnable beforeEndFailure;

    public FailingPrimary(Backend delegate, AtomicInteger failures) {
        this(delegate, failures, new AtomicInteger(), () -> { });
    }

    public FailingPrimary(Backend delegate, AtomicInteger failures, AtomicInteger endFailures,
                          Runnable beforeEndFailure) {
        super(delegate);
        this.failures = failures;
        this.endFailures = endFailures;
        this.beforeEndFailure = beforeEndFailure;
    }

    @Override
    public PrimaryTransport primaryTransport() {
        PrimaryTransport real = super.primaryTransport();
        return (PrimaryTransport) Proxy.newProxyInstance(PrimaryTransport.class.getClassLoader(),
                new Class<?>[] {PrimaryTransport.class}, (p, m, a) -> {
                    Object r = invoke(real, m, a);
                    if (m.getName().equals("createAll")) {
                        PrimaryComm[] comms = (PrimaryComm[]) r;
                        for (int i = 0; i < comms.length; i++) {
                            comms[i] = failing(comms[i]);
                        }
                    } else if (m.getName().equals("create")) {
                        r = failing((PrimaryComm) r);
                    } else if (m.getName().equals("groupEnd") && refuse(endFailures)) {
                        beforeEndFailure.run();
                        throw new FlexLinkException(Result.UNHANDLED_CUDA_ERROR, "ncclGroupEnd refused (injected)");
                    }
                    return r;
                });
    }

    private PrimaryComm failing(PrimaryComm comm) {
        return (PrimaryComm) Proxy.newProxyInstance(PrimaryComm.class.getClassLoader(),
                new Class<?>[] {PrimaryComm.class}, (p, m, a) -> {
                    if (m.getName().equals("allReduce") && refuse(failures)) {
                        throw new FlexLinkException(Result.UNHANDLED_CUDA_ERROR, "ncclAllReduce refused (injected)");
                    }
                    return invoke(comm, m, a);
                });
    }

    /** Takes one refusal of {@code left}, if any is left. */
    private static boolean refuse(AtomicInteger left) {
        return left.getAndUpdate(f -> Math.max(0, f - 1)) > 0;
    }

    private static Object invoke(Object target, Method m, Object[] a) throws Throwable {
        try {
            return m.invoke(target, a);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
