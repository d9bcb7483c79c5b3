package io.flexlink.bench;

import io.flexlink.Communicator;
import io.flexlink.FlexLink;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.PrimaryComm;
import io.flexlink.runtime.PrimaryTransport;
import java.util.Arrays;

/**
 * --baseline's two comparisons, made once per run on the workspace's devices: {@link #raw}, the backend's
 * own collectives called directly (NCCL through bytedeco on CUDA, {@link NcclCalls}; the host ring through
 * the runtime SPI on the host backend, {@link PrimaryCalls}), and {@link #primaryOnly}, FlexLink
 * communicators restricted to their primary path. Either is null where it cannot exist here.
 */
final class Baselines implements AutoCloseable {
    /** The backend's own collectives, or null (NCCL refuses several ranks on one GPU). */
    final CallTarget raw;
    /** FlexLink with {@code flexlink.paths=primary}, or null when FlexLink has no primary path here. */
    final CallTarget primaryOnly;
    /** Why a comparison is missing, or null when both exist. */
    final String missing;

    private Baselines(CallTarget raw, CallTarget primaryOnly, String missing) {
        this.raw = raw;
        this.primaryOnly = primaryOnly;
        this.missing = missing;
    }

    static Baselines none() {
        return new Baselines(null, null, null);
    }

    /**
     * Creates both where possible. {@code gather} is non-null in a --from-env job, whose one local rank is
     * {@code o.firstRank()} of {@code o.worldSize()}; every process creates the same ones in the same order.
     */
    static Baselines open(PerfOptions o, Backend backend, FlexLinkConfig config, int[] devices,
                          Workspace.StreamSource streams, RankGather gather, boolean flexHasPrimary) {
        CallTarget raw = null;
        CallTarget prim = null;
        String missing = null;
        try {
            if (streams instanceof CudaStreams) {
                CudaStreams cuda = (CudaStreams) streams;
                if (gather != null) {
                    raw = NcclCalls.initRank(gather, o.firstRank(), o.worldSize(), devices[0], cuda);
                } else if (Arrays.stream(devices).distinct().count() == devices.length) {
                    raw = NcclCalls.initAll(devices, cuda);
                } else {
                    missing = "NCCL refuses several ranks on one GPU: no raw NCCL baseline";
                }
            } else {
                PrimaryTransport t = backend.primaryTransport();
                PrimaryComm[] comms = gather != null
                        ? new PrimaryComm[] {t.create(gather.exchange(), o.firstRank(), o.worldSize(), devices[0])}
                        : t.createAll(devices);
                raw = new PrimaryCalls(t, comms, backend);
            }
            if (flexHasPrimary) {
                FlexLinkConfig primaryOnly = config.with(FlexLinkConfig.PATHS, "primary")
                        .with(FlexLinkConfig.SHARE, "auto");
                Communicator[] comms = gather != null
                        ? new Communicator[] {FlexLink.initFromEnv(backend, primaryOnly, o.environment)}
                        : FlexLink.initAll(backend, primaryOnly, devices);
                prim = new FlexCalls("FlexLink, primary path alone", comms);
            } else {
                missing = (missing == null ? "" : missing + "; ") + "FlexLink has no primary path here (several "
                        + "ranks share a device or --paths leaves it out): no primary-only run";
            }
            return new Baselines(raw, prim, missing);
        } catch (RuntimeException | Error e) {
            closeQuietly(raw);
            closeQuietly(prim);
            throw e;
        }
    }

    void abort() {
        if (raw != null) {
            raw.abort();
        }
        if (primaryOnly != null) {
            primaryOnly.abort();
        }
    }

    @Override
    public void close() {
        closeQuietly(raw);
        closeQuietly(primaryOnly);
    }

    private static void closeQuietly(CallTarget t) {
        if (t != null) {
            try {
                t.close();
            } catch (RuntimeException e) {
                // best effort
            }
        }
    }
}
