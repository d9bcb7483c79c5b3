package io.flexlink.backend;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.BackendProvider;
import io.flexlink.runtime.host.HostBackend;
import java.util.ServiceLoader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Finds the backend {@code flexlink.backend} asks for: {@code auto}, {@code host} or {@code cuda}. */
public final class Backends {
    private static final Logger LOG = LoggerFactory.getLogger(Backends.class);

    private Backends() {
    }

    /** The provider named {@code name} on the class path, or null. */
    public static BackendProvider provider(String name) {
        for (BackendProvider p : ServiceLoader.load(BackendProvider.class)) {
            if (p.name().equals(name)) {
                return p;
            }
        }
        return null;
    }

    /**
     * Opens the configured backend. {@code auto} takes CUDA when it is on the class path and a GPU and the
     * CUDA libraries load, else the host backend, saying why in one INFO line.
     *
     * @throws FlexLinkException SYSTEM_ERROR when {@code cuda} is asked for and cannot run here
     */
    public static Backend open(FlexLinkConfig config) {
        String wanted = config.backend();
        if (wanted.equals("host")) {
            return new HostBackend(config);
        }
        BackendProvider cuda = provider("cuda");
        String reason = cuda == null ? "flexlink-native is not on the class path" : cuda.unavailableReason();
        if (reason == null) {
            LOG.info("INIT backend cuda");
            return cuda.open(config);
        }
        if (wanted.equals("cuda")) {
            throw new FlexLinkException(Result.SYSTEM_ERROR, "backend cuda is not available: " + reason);
        }
        LOG.info("INIT backend host (cuda unavailable: {})", reason);
        return new HostBackend(config);
    }
}
