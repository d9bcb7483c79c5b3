package io.flexlink.testing;

import io.flexlink.runtime.PrimaryTransport;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;

/**
 * A primary transport that answers one of its methods as a test says and forwards every other call to the real
 * one: a tuned NCCL's description, or NCCL's refusal of two ranks on one device, on the host ring.
 */
public final class TransportAnswers {
    private TransportAnswers() {
    }

    /** {@code real}, except that {@code method} (a method without overloads) returns {@code answer}. */
    public static PrimaryTransport answering(PrimaryTransport real, String method, Object answer) {
        return (PrimaryTransport) Proxy.newProxyInstance(TransportAnswers.class.getClassLoader(),
                new Class<?>[] {PrimaryTransport.class}, (p, m, args) -> {
                    if (m.getName().equals(method)) {
                        return answer;
                    }
                    try {
                        return m.invoke(real, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }
}
