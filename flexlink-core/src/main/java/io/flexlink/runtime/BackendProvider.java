package io.flexlink.runtime;

import io.flexlink.config.FlexLinkConfig;

/**
 * Makes a {@link Backend} available to discovery ({@link java.util.ServiceLoader}); flexlink-native
 * registers the CUDA backend this way, so flexlink-core needs no native code.
 */
public interface BackendProvider {
    /** The backend's name, as {@code flexlink.backend} selects it. */
    String name();

    /** Null when the backend can run on this machine, else one line saying why not. */
    String unavailableReason();

    /** Opens the backend; only called when {@link #unavailableReason()} is null. */
    Backend open(FlexLinkConfig config);
}
