package io.flexlink.comm;

import io.flexlink.Communicator;
import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.UniqueId;
import io.flexlink.balance.FixedShares;
import io.flexlink.balance.ShareProvider;
import io.flexlink.bootstrap.InProcessRendezvous;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.path.Path;
import io.flexlink.path.PcieStagedPath;
import io.flexlink.path.PrimaryPath;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.PinnedMemory;
import io.flexlink.runtime.PrimaryComm;
import io.flexlink.runtime.PrimaryTransport;
import io.flexlink.runtime.RankExchange;
import io.flexlink.sync.Staging;
import io.flexlink.sync.StagingLayout;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Creates communicators: all ranks of a process at once, or one rank per thread from a unique id. */
public final class CommunicatorFactory {
    private static final Logger LOG = LoggerFactory.getLogger(CommunicatorFactory.class);

    private CommunicatorFactory() {
    }

    /** Like {@code ncclCommInitAll}: rank {@code i} on {@code devices[i]}, created by this thread. */
    public static Communicator[] initAll(Backend backend, FlexLinkConfig config, int[] devices) {
        if (devices == null || devices.length == 0) {
            throw Validator.invalid("devices: at least one device is needed");
        }
        int n = devices.length;
        for (int d : devices) {
            if (d < 0 || d >= backend.deviceCount()) {
                throw Validator.invalid("devices: " + d + " is not a device of the " + backend.name()
                        + " backend (it has " + backend.deviceCount() + ")");
            }
        }
        PrimaryTransport transport = backend.primaryTransport();
        boolean primaryOn = primaryOn(config, transport, devices);
        PrimaryComm[] primaries = primaryOn ? transport.createAll(devices) : null;
        List<String> aux = auxPaths(config, n);
        PinnedMemory pcieArea = null;
        StagingLayout layout = new StagingLayout(n, config.slots(), config.chunkBytes());
        if (aux.contains("pcie")) {
            pcieArea = backend.createShared(layout.totalBytes());
        }
        Communicator[] comms = new Communicator[n];
        for (int r = 0; r < n; r++) {
            List<Path> paths = new ArrayList<>();
            if (pcieArea != null) {
                PinnedMemory mem = r == 0 ? pcieArea : backend.openShared(pcieArea.name(), layout.totalBytes());
                paths.add(pcie(backend, layout, mem, r, n, devices[r]));
            }
            Path primary = primaryOn ? new PrimaryPath(primaries[r]) : null;
            comms[r] = new FlexCommunicator(backend, transport, r, n, devices[r], primary, paths,
                    shares(config, aux), config.minSplitBytes());
        }
        log(backend, config, n, primaryOn, aux, transport);
        return comms;
    }

    /** Like {@code ncclCommInitRank}: every rank calls this with the same id, from its own thread. */
    public static Communicator initRank(Backend backend, FlexLinkConfig config, int nranks, UniqueId id, int rank,
                                        int device) {
        if (id == null) {
            throw Validator.invalid("commId: null");
        }
        if (nranks < 1) {
            throw Validator.invalid("nranks: " + nranks + " (must be at least 1)");
        }
        if (rank < 0 || rank >= nranks) {
            throw Validator.invalid("rank: " + rank + " is not in [0, " + nranks + ")");
        }
        if (device < 0 || device >= backend.deviceCount()) {
            throw Validator.invalid("device: " + device + " is not a device of the " + backend.name() + " backend");
        }
        RankExchange exchange = InProcessRendezvous.join(id.token(), nranks, rank, config.initTimeout());
        try {
            return initRank(backend, config, exchange, nranks, rank, device);
        } finally {
            InProcessRendezvous.leave(id.token());
        }
    }

    /** Creates one rank over any exchange (in-process or over the network). */
    public static Communicator initRank(Backend backend, FlexLinkConfig config, RankExchange exchange, int nranks,
                                        int rank, int device) {
        // every rank must split identically: refuse ranks configured differently
        byte[][] digests = exchange.allGather(digest(config).getBytes(StandardCharsets.UTF_8));
        for (int r = 0; r < nranks; r++) {
            if (!Arrays.equals(digests[r], digests[0])) {
                throw new FlexLinkException(Result.INVALID_USAGE, "configuration: rank " + r + " has "
                        + new String(digests[r], StandardCharsets.UTF_8) + " but rank 0 has "
                        + new String(digests[0], StandardCharsets.UTF_8) + "; every rank must split identically");
            }
        }
        byte[][] devs = exchange.allGather(ByteBuffer.allocate(4).putInt(device).array());
        int[] devices = new int[nranks];
        for (int r = 0; r < nranks; r++) {
            devices[r] = ByteBuffer.wrap(devs[r]).getInt();
        }
        PrimaryTransport transport = backend.primaryTransport();
        boolean primaryOn = primaryOn(config, transport, devices);
        PrimaryComm primaryComm = primaryOn ? transport.create(exchange, rank, nranks, device) : null;
        List<String> aux = auxPaths(config, nranks);
        List<Path> paths = new ArrayList<>();
        if (aux.contains("pcie")) {
            StagingLayout layout = new StagingLayout(nranks, config.slots(), config.chunkBytes());
            PinnedMemory mine = rank == 0 ? backend.createShared(layout.totalBytes()) : null;
            byte[][] names = exchange.allGather(mine == null ? new byte[0] : mine.name().getBytes(StandardCharsets.UTF_8));
            PinnedMemory mem = mine != null ? mine
                    : backend.openShared(new String(names[0], StandardCharsets.UTF_8), layout.totalBytes());
            exchange.allGather(new byte[0]); // all mapped
            paths.add(pcie(backend, layout, mem, rank, nranks, device));
        }
        Path primary = primaryOn ? new PrimaryPath(primaryComm) : null;
        if (rank == 0) {
            log(backend, config, nranks, primaryOn, aux, transport);
        }
        return new FlexCommunicator(backend, transport, rank, nranks, device, primary, paths, shares(config, aux),
                config.minSplitBytes());
    }

    private static Path pcie(Backend backend, StagingLayout layout, PinnedMemory mem, int rank, int size, int device) {
        Staging staging = new Staging(layout, mem, rank);
        return new PcieStagedPath(backend, staging, rank, size, device, staging::releaseAll);
    }

    private static boolean primaryOn(FlexLinkConfig config, PrimaryTransport transport, int[] devices) {
        if (!config.paths().contains("primary")) {
            return false;
        }
        Set<Integer> distinct = new HashSet<>();
        for (int d : devices) {
            distinct.add(d);
        }
        if (distinct.size() < devices.length && !transport.allowsSharedDevices()) {
            LOG.info("INIT primary path off: {} does not allow several ranks on one device", transport.describe());
            return false;
        }
        return true;
    }

    private static List<String> auxPaths(FlexLinkConfig config, int n) {
        List<String> aux = new ArrayList<>();
        for (String p : config.paths()) {
            if (p.equals("pcie")) {
                if (n > 64) {
                    LOG.info("INIT pcie path off: more than 64 ranks");
                    continue;
                }
                aux.add(p);
            } else if (p.equals("nvshmem")) {
                LOG.info("INIT nvshmem path off: not available on this backend");
            }
        }
        if (aux.isEmpty() && !config.paths().contains("primary")) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "flexlink.paths: no usable path in " + config.paths());
        }
        return aux;
    }

    private static ShareProvider shares(FlexLinkConfig config, List<String> aux) {
        return new FixedShares(aux, config.shares());
    }

    private static String digest(FlexLinkConfig config) {
        return "paths=" + config.paths() + " share=" + config.shares() + " chunk=" + config.chunkBytes()
                + " slots=" + config.slots() + " minSplit=" + config.minSplitBytes();
    }

    private static void log(Backend backend, FlexLinkConfig config, int n, boolean primaryOn, List<String> aux,
                            PrimaryTransport transport) {
        LOG.info("INIT {} ranks on {} backend: primary {}, auxiliary {}, shares {}, chunk {} B x {} slots",
                n, backend.name(), primaryOn ? transport.describe() : "off", aux,
                config.shares().isEmpty() ? "auto" : config.shares(), config.chunkBytes(), config.slots());
    }
}
