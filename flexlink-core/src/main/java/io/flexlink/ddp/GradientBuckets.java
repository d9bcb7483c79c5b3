package io.flexlink.ddp;

import io.flexlink.Communicator;
import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.Stream;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.RuntimeEvent;
import io.flexlink.runtime.RuntimeStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Data-parallel gradient synchronization, as PyTorch's DDP does it: gradients are grouped into buckets,
 * and each bucket's AllReduce is launched on a communication stream the moment its last gradient is
 * ready, so that communication overlaps the rest of backward.
 *
 * <pre>{@code
 * GradientBucketsBuilder b = GradientBuckets.builder(comm, backend);
 * Parameter w1 = b.register("fc1.weight", gradW1, n1, DataType.FLOAT32);   // in model order
 * ...
 * GradientBuckets buckets = b.build();      // collective: every rank, same parameters
 * // each step, during backward:
 * buckets.ready(w2, compute);               // as soon as w2's gradient has been enqueued on `compute`
 * ...
 * buckets.finish(compute);                  // `compute` now waits for every reduced gradient
 * }</pre>
 *
 * <p>{@link #ready} records an event on the compute stream; the communication stream waits on it (the host
 * never waits for the device), moves the gradient into its bucket and, once the bucket is complete and every
 * earlier bucket launched, runs the bucket's AllReduce. Buckets launch in the same order on every rank
 * whatever order the gradients arrive in, and the ranks check that they built the same buckets before the
 * first launch, so that a rank that differs gets an error on every rank instead of a hang.
 *
 * <p>One thread uses a set of buckets at a time (like a stream). Steady-state steps allocate nothing.
 * Errors: bad arguments throw {@link FlexLinkException} with INVALID_ARGUMENT and change nothing; a step
 * that cannot complete (a parameter never marked ready without
 * {@link GradientBucketsBuilder#findUnusedParameters}) aborts the communicator, so that the other ranks fail
 * too, and throws INVALID_USAGE.
 */
public final class GradientBuckets implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(GradientBuckets.class);

    private final Object owner;
    private final Communicator comm;
    private final Backend backend;
    private final DdpOptions options;
    private final List<Parameter> params;
    private final RuntimeStream commStream;
    private final boolean ownsStream;
    private final RuntimeEvent[] readyEvents;
    private final List<RuntimeEvent> doneEvents = new ArrayList<>();
    private final ConstantBuffers constants;
    private final LayoutAgreement agreement;
    private BucketSet buckets;
    private final boolean[] readyThisStep;
    private final int[] readyOrder;
    private int readyCount;
    private long steps;
    private FlexLinkException failure;
    private boolean closed;

    GradientBuckets(GradientBucketsBuilder b, DdpOptions options, RuntimeStream commStream, boolean ownsStream) {
        this.owner = b.owner();
        this.comm = b.comm();
        this.backend = b.backend();
        this.options = options;
        this.params = b.parameters();
        this.commStream = commStream;
        this.ownsStream = ownsStream;
        int n = params.size();
        this.readyThisStep = new boolean[n];
        this.readyOrder = new int[n];
        this.readyEvents = new RuntimeEvent[n];
        ConstantBuffers k = null;
        LayoutAgreement a = null;
        boolean ok = false;
        try {
            for (int i = 0; i < n; i++) {
                readyEvents[i] = backend.createEvent(comm.device(), false);
            }
            k = new ConstantBuffers(backend, comm.device(), params, options);
            a = new LayoutAgreement(comm, backend, commStream, n);
            BucketPlan plan = BucketPlan.of(params, BucketPlan.reverseOrder(n), options.firstCap(), options.cap());
            long bytes = params.stream().mapToLong(Parameter::bytes).sum();
            a.agreeOnLayout(plan.hash, n, bytes, options.hash());
            buckets = new BucketSet(backend, comm.device(), params, plan, options.cast(), doneEvents(plan.buckets()));
            ok = true;
        } finally {
            constants = k;
            agreement = a;
            if (!ok) {
                release();
            }
        }
        if (LOG.isDebugEnabled()) {
            LOG.debug("rank {}: {} gradients in {} buckets: {}", comm.rank(), n, buckets.buckets(), layout());
        }
    }

    /** Starts building the buckets of one rank of {@code comm}, whose memory and streams come from {@code backend}. */
    public static GradientBucketsBuilder builder(Communicator comm, Backend backend) {
        return new GradientBucketsBuilder(comm, backend);
    }

    /**
     * Marks {@code param}'s gradient ready: it is complete once the work enqueued so far on
     * {@code computeStream} has run. Launches its bucket's AllReduce if this completes the bucket (and every
     * earlier bucket has been launched). Enqueues only; never waits.
     */
    public void ready(Parameter param, Stream computeStream) {
        usable("ready");
        RuntimeStream s = stream(computeStream, "computeStream");
        if (param == null || !param.ownedBy(owner)) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "param: " + (param == null ? "null"
                    : param + " was registered with other gradient buckets"));
        }
        int p = param.index();
        if (readyThisStep[p]) {
            throw new FlexLinkException(Result.INVALID_USAGE, "param: " + param + " was already marked ready in step "
                    + (steps + 1) + "; each gradient is marked ready once per step");
        }
        readyThisStep[p] = true;
        readyOrder[readyCount++] = p;
        s.record(readyEvents[p]);
        commStream.waitEvent(readyEvents[p]);
        buckets.arrive(p, commStream);
        buckets.launchReady(comm, commStream, options, constants);
    }

    /**
     * Ends the step: parameters not marked ready contribute zeros when the buckets were built with
     * {@link GradientBucketsBuilder#findUnusedParameters}, every remaining bucket is launched, and
     * {@code computeStream} waits for every bucket, so that work enqueued on it afterwards (the optimizer) sees
     * the reduced gradients. After the first step, rebuilds the buckets from the order the gradients arrived in
     * (when enabled), which waits once on the host.
     */
    public void finish(Stream computeStream) {
        usable("finish");
        RuntimeStream s = stream(computeStream, "computeStream");
        Result async = comm.getAsyncError();
        if (async != Result.SUCCESS) {
            throw fail(new FlexLinkException(async, "finish: the communicator failed (" + async.description()
                    + "); the gradients of step " + (steps + 1) + " are not reduced"), false);
        }
        if (readyCount < params.size()) {
            if (!options.findUnused()) {
                throw fail(new FlexLinkException(Result.INVALID_USAGE, "finish: " + notReady()
                        + " never marked ready in step " + (steps + 1) + ". Build with findUnusedParameters(true) when"
                        + " some parameters take no part in a step; the communicator was aborted so that the other"
                        + " ranks fail instead of waiting for this rank's buckets"), true);
            }
            for (int p = params.size() - 1; p >= 0; p--) {
                if (!readyThisStep[p]) {
                    buckets.arriveUnused(p, commStream, constants);
                }
            }
            buckets.launchReady(comm, commStream, options, constants);
        }
        buckets.joinInto(s);
        steps++;
        if (steps == 1 && options.rebuild()) {
            rebuild();
        }
        Arrays.fill(readyThisStep, false);
        readyCount = 0;
        buckets.startStep();
    }

    /** Rebuilds the buckets from the first step's ready order, once the ranks agree on that order. */
    private void rebuild() {
        int[] order = Arrays.copyOf(readyOrder, params.size());
        int at = readyCount;
        for (int p = params.size() - 1; p >= 0; p--) {
            if (!readyThisStep[p]) {
                order[at++] = -1 - p; // unused in the first step: last, in reverse model order, marked unused
            }
        }
        try {
            // waits for the comm stream: the old buckets' buffers are idle after it
            order = agreement.agreeOnOrder(order, params);
        } catch (FlexLinkException e) {
            throw fail(e, false);
        }
        BucketPlan plan = BucketPlan.of(params, order, options.firstCap(), options.cap());
        if (plan.hash == buckets.plan.hash) {
            return;
        }
        BucketSet old = buckets;
        buckets = new BucketSet(backend, comm.device(), params, plan, options.cast(), doneEvents(plan.buckets()));
        old.close();
        if (LOG.isDebugEnabled()) {
            LOG.debug("rank {}: buckets rebuilt from the first step's ready order: {}", comm.rank(), layout());
        }
    }

    /** The buckets as they are now, in launch order. */
    public List<BucketView> layout() {
        List<BucketView> out = new ArrayList<>();
        BucketPlan plan = buckets.plan;
        for (int b = 0; b < plan.buckets(); b++) {
            List<String> names = new ArrayList<>();
            for (int p : plan.members[b]) {
                names.add(params.get(p).name());
            }
            out.add(new BucketView(b, List.copyOf(names), plan.bytes[b], buckets.wireType(b), buckets.inPlace(b)));
        }
        return List.copyOf(out);
    }

    /** Steps finished so far. */
    public long steps() {
        return steps;
    }

    /** The stream the AllReduces run on. */
    public Stream communicationStream() {
        return commStream;
    }

    /** The registered parameters, in model order. */
    public List<Parameter> parameters() {
        return params;
    }

    private RuntimeStream stream(Stream stream, String argument) {
        if (stream == null) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, argument + ": null");
        }
        RuntimeStream s;
        try {
            s = backend.runtimeStream(stream);
        } catch (FlexLinkException e) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, argument + ": " + e.detail(), e);
        }
        if (s.device() != comm.device()) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, argument + ": on device " + s.device()
                    + ", but rank " + comm.rank() + "'s communicator is on device " + comm.device());
        }
        return s;
    }

    private void usable(String call) {
        if (closed) {
            throw new FlexLinkException(Result.INVALID_USAGE, call + ": the gradient buckets are closed");
        }
        if (failure != null) {
            throw new FlexLinkException(failure.result(), call + ": the gradient buckets failed earlier: "
                    + failure.detail(), failure);
        }
    }

    private FlexLinkException fail(FlexLinkException e, boolean abort) {
        failure = e;
        if (abort) {
            comm.abort();
        }
        return e;
    }

    private String notReady() {
        List<String> names = new ArrayList<>();
        for (int p = 0; p < params.size(); p++) {
            if (!readyThisStep[p]) {
                names.add(params.get(p).toString());
            }
        }
        return names.size() == 1 ? "parameter " + names.get(0) + " was" : "parameters " + names + " were";
    }

    private RuntimeEvent[] doneEvents(int count) {
        while (doneEvents.size() < count) {
            doneEvents.add(backend.createEvent(comm.device(), false));
        }
        return doneEvents.subList(0, count).toArray(new RuntimeEvent[0]);
    }

    /**
     * Waits for the communication stream (so that no AllReduce still uses the buffers), then frees
     * everything; idempotent. After a failure of the communicator, abort or close it first.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            commStream.synchronize();
        } catch (FlexLinkException e) {
            LOG.debug("rank {}: communication stream failed before close: {}", comm.rank(), e.getMessage());
        }
        release();
    }

    private void release() {
        if (buckets != null) {
            buckets.close();
        }
        if (agreement != null) {
            agreement.close();
        }
        if (constants != null) {
            constants.close();
        }
        for (RuntimeEvent e : readyEvents) {
            if (e != null) {
                e.close();
            }
        }
        for (RuntimeEvent e : doneEvents) {
            e.close();
        }
        if (ownsStream) {
            commStream.close();
        }
    }
}
