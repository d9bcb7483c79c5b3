package io.flexlink.bench;

import io.flexlink.FlexLink;
import io.flexlink.config.FlexLinkConfig;
import java.net.InetAddress;

/** Where a run happens: backend, devices, configuration, versions; printed in the header and the JSON. */
final class RunEnv {
    final String program;
    final String backend;
    /** Why this backend, in a few words, e.g. that no GPU was found. */
    final String backendNote;
    /** The full reason (why CUDA cannot run here), for --verbose and the JSON; or null. */
    String backendDetail;
    final String backendDescription;
    final int deviceCount;
    /** Transport, versions and GPUs as the backend reports them. */
    final BackendFacts facts;
    final int[] devices;
    final FlexLinkConfig config;
    final String host;
    final long pid;
    /** Each rank's process id in a --from-env run (gathered), else null: every rank is this process. */
    long[] pids;

    RunEnv(String program, BackendFacts facts, String backendNote, int[] devices, FlexLinkConfig config) {
        // devices: every rank of the job (gathered with --from-env)
        this.program = program;
        this.facts = facts;
        this.backend = facts.name;
        this.backendNote = backendNote;
        this.backendDescription = facts.description;
        this.deviceCount = facts.deviceCount;
        this.devices = devices;
        this.config = config;
        this.host = hostName();
        this.pid = ProcessHandle.current().pid();
    }

    /** The process of rank {@code r}. */
    long pid(int r) {
        return pids == null ? pid : pids[r];
    }

    static String flexlinkVersion() {
        return FlexLink.VERSION;
    }

    static String javaVersion() {
        return System.getProperty("java.version") + " (" + System.getProperty("java.vm.name") + ")";
    }

    private static String hostName() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (Exception e) {
            String h = System.getenv("HOSTNAME");
            return h == null ? "localhost" : h;
        }
    }
}
