package io.flexlink.bench;

import io.flexlink.Communicator;
import io.flexlink.FlexLink;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.PrimaryComm;
import io.flexlink.runtime.PrimaryTransport;
import io.flexlink.runtime.RankExchange;

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
        RankLayout layout = o.layout;
        try {
            if (streams instanceof CudaStreams) {
                CudaStreams cuda = (CudaStreams) streams;
                RawNcclPlan plan = RawNcclPlan.of(layout, devices, o.firstRank(), gather != null);
                if (plan.refusal != null) {
                    missing = plan.refusal;
                } else {
                    NcclCalls parents = gather != null
                            ? NcclCalls.initRank(gather, o.firstRank(), o.worldSize(), devices[0], cuda)
                            : NcclCalls.initAll(devices, cuda);
                    // split as the run's FlexLink communicators are; split() destroys the parents after
                    raw = plan.colors == null ? parents : parents.split(plan.colors, plan.keys, layout.split.setting());
                }
            } else {
                PrimaryTransport t = backend.primaryTransport();
                raw = new PrimaryCalls(t, hostRings(t, o, devices, gather), backend);
            }
            if (flexHasPrimary) {
                FlexLinkConfig primaryOnly = config.with(FlexLinkConfig.PATHS, "primary")
                        .with(FlexLinkConfig.SHARE, "auto");
                Communicator[] comms = gather != null
                        ? new Communicator[] {FlexLink.initFromEnv(backend, primaryOnly, o.environment)}
                        : FlexLink.initAll(backend, primaryOnly, devices);
                prim = new FlexCalls("FlexLink, primary path alone", split(comms, layout));
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

    /**
     * The host ring's communicators of the local ranks: one ring per sub-communicator with a split, each
     * created over the members' part of the job's exchange (every process takes part in every round,
     * and the rings of all colors are created at once, in the same rounds).
     */
    private static PrimaryComm[] hostRings(PrimaryTransport t, PerfOptions o, int[] devices, RankGather gather) {
        RankLayout l = o.layout;
        if (gather != null) {
            int rank = o.firstRank();
            return new PrimaryComm[] {t.create(members(gather.exchange(), l, rank), l.commRank(rank), l.commSize(),
                    devices[0])};
        }
        if (l.split == null) {
            return t.createAll(devices);
        }
        PrimaryComm[] comms = new PrimaryComm[devices.length];
        try {
            for (int r = 0; r < devices.length; r++) {
                if (comms[r] != null) {
                    continue; // made with its color's ring
                }
                int[] ranks = new int[l.commSize()];
                for (int q = 0; q < devices.length; q++) {
                    if (l.color(q) == l.color(r)) {
                        ranks[l.commRank(q)] = q;
                    }
                }
                int[] devs = new int[ranks.length];
                for (int i = 0; i < ranks.length; i++) {
                    devs[i] = devices[ranks[i]];
                }
                PrimaryComm[] ring = t.createAll(devs);
                for (int i = 0; i < ranks.length; i++) {
                    comms[ranks[i]] = ring[i];
                }
            }
            return comms;
        } catch (RuntimeException | Error e) {
            for (PrimaryComm c : comms) {
                if (c != null) {
                    c.close();
                }
            }
            throw e;
        }
    }

    /** The job's exchange seen by {@code rank}'s sub-communicator: its members' entries, by their rank there. */
    private static RankExchange members(RankExchange job, RankLayout l, int rank) {
        if (l.split == null) {
            return job;
        }
        return new RankExchange() {
            @Override
            public byte[][] allGather(byte[] mine) {
                byte[][] all = job.allGather(mine);
                byte[][] out = new byte[l.commSize()][];
                for (int q = 0; q < all.length; q++) {
                    if (l.color(q) == l.color(rank)) {
                        out[l.commRank(q)] = all[q];
                    }
                }
                return out;
            }

            @Override
            public boolean crossProcess() {
                return job.crossProcess();
            }
        };
    }

    /** FlexLink's primary-only communicators, split as the run's are; the unsplit ones are closed after. */
    private static Communicator[] split(Communicator[] comms, RankLayout layout) {
        if (layout.split == null) {
            return comms;
        }
        try {
            return SplitComms.split(comms, layout);
        } finally {
            for (Communicator c : comms) {
                c.close(); // a split communicator does not depend on its parent
            }
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
