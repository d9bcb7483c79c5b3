package io.flexlink.ddp;

import io.flexlink.Buffer;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLinkException;
import io.flexlink.ReduceOp;
import io.flexlink.Result;
import io.flexlink.Stream;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.RuntimeStream;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Collects one rank's parameters in model order and the options of its {@link GradientBuckets}. Every
 * argument is checked when given (INVALID_ARGUMENT naming it); {@link #build()} is collective.
 */
public final class GradientBucketsBuilder {
    private final Object owner = new Object();
    private final Communicator comm;
    private final Backend backend;
    private final List<Parameter> params = new ArrayList<>();
    private FlexLinkConfig config;
    private ReduceOp op = ReduceOp.AVG;
    private double scale = 1.0;
    private Long firstCap;
    private Long cap;
    private boolean findUnused;
    private boolean rebuild = true;
    private GradientCast cast;
    private Stream commStream;
    private boolean built;

    GradientBucketsBuilder(Communicator comm, Backend backend) {
        if (comm == null) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "comm: null");
        }
        if (backend == null) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "backend: null");
        }
        this.comm = comm;
        this.backend = backend;
    }

    /** Registers the next parameter in model order under the name {@code param<index>}. */
    public Parameter register(Buffer gradient, long count, DataType type) {
        return register(null, gradient, count, type);
    }

    /**
     * Registers the next parameter in model order: its gradient is the first {@code count} elements of
     * {@code type} in {@code gradient}, on this rank's device.
     */
    public Parameter register(String name, Buffer gradient, long count, DataType type) {
        open();
        String n = name == null ? "param" + params.size() : name;
        if (gradient == null) {
            throw bad("gradient: null (parameter '" + n + "')");
        }
        if (type == null || !type.isFloatingPoint()) {
            throw bad("type: " + type + " is not a floating-point type (parameter '" + n + "')");
        }
        if (count <= 0) {
            throw bad("count: must be positive, got " + count + " (parameter '" + n + "')");
        }
        if (count > gradient.byteSize() / type.size()) {
            throw bad("count: " + count + " elements of " + type + " do not fit the " + gradient.byteSize()
                    + "-byte gradient buffer of parameter '" + n + "'");
        }
        if (gradient.device() != comm.device()) {
            throw bad("gradient: parameter '" + n + "' is on device " + gradient.device() + ", but rank "
                    + comm.rank() + "'s communicator is on device " + comm.device());
        }
        long start = gradient.address();
        long end = start + count * type.size();
        for (Parameter p : params) {
            long s = p.gradient().address();
            if (start < s + p.bytes() && s < end) {
                throw bad("gradient: parameter '" + n + "' overlaps the gradient of " + p);
            }
        }
        Parameter p = new Parameter(owner, params.size(), n, gradient, count, type);
        params.add(p);
        return p;
    }

    /**
     * How the ranks' gradients combine: {@link ReduceOp#AVG} (the default, like DDP) or {@link ReduceOp#SUM},
     * and a factor applied to each reduced gradient ({@code 1}: none), e.g. {@code SUM} with
     * {@code 1 / (ranks * accumulationSteps)}.
     */
    public GradientBucketsBuilder reduction(ReduceOp op, double scale) {
        open();
        if (op != ReduceOp.SUM && op != ReduceOp.AVG) {
            throw bad("op: gradients are combined with SUM or AVG, not " + op);
        }
        if (!Double.isFinite(scale) || scale == 0) {
            throw bad("scale: must be finite and non-zero, got " + scale);
        }
        this.op = op;
        this.scale = scale;
        return this;
    }

    /** Where the bucket caps' defaults come from ({@code flexlink.ddp.*}); default: the environment. */
    public GradientBucketsBuilder config(FlexLinkConfig c) {
        open();
        if (c == null) {
            throw bad("config: null");
        }
        this.config = c;
        return this;
    }

    /** Bytes per bucket after the first; default {@code flexlink.ddp.bucketCap}. */
    public GradientBucketsBuilder bucketCap(long bytes) {
        open();
        this.cap = positive("bucketCap", bytes);
        return this;
    }

    /** Bytes of each type's first bucket; default {@code flexlink.ddp.firstBucketCap}. */
    public GradientBucketsBuilder firstBucketCap(long bytes) {
        open();
        this.firstCap = positive("firstBucketCap", bytes);
        return this;
    }

    /**
     * With {@code true}, a parameter not marked ready when a step finishes contributes a zero gradient (the
     * ranks that did use it give the average of theirs): DDP's {@code find_unused_parameters}. Its bucket
     * then launches only at {@link GradientBuckets#finish}. Without it (the default) that is an error.
     */
    public GradientBucketsBuilder findUnusedParameters(boolean enabled) {
        open();
        this.findUnused = enabled;
        return this;
    }

    /**
     * With {@code true} (the default, like DDP), the buckets are rebuilt once after the first step from the
     * order in which that step's gradients became ready, so that later steps fill the buckets in order. The
     * ranks check first that they all saw the same order.
     */
    public GradientBucketsBuilder rebuildFromReadyOrder(boolean enabled) {
        open();
        this.rebuild = enabled;
        return this;
    }

    /** Carries the gradients (all FLOAT32) in {@code hook}'s narrower type; null: in their own type. */
    public GradientBucketsBuilder cast(GradientCast hook) {
        open();
        if (hook != null && hook.wireType() != DataType.BFLOAT16 && hook.wireType() != DataType.FLOAT16) {
            throw bad("cast: the wire type must be BFLOAT16 or FLOAT16, got " + hook.wireType());
        }
        this.cast = hook;
        return this;
    }

    /** The stream the AllReduces run on; default: a stream of the buckets' own. */
    public GradientBucketsBuilder communicationStream(Stream stream) {
        open();
        this.commStream = stream;
        return this;
    }

    /**
     * Plans the buckets, checks with every other rank that they built the same ones (a collective: every
     * rank calls it, once its parameters are registered) and allocates what the steps reuse.
     *
     * @throws FlexLinkException INVALID_USAGE on every rank when the ranks' parameters or options differ
     */
    public GradientBuckets build() {
        open();
        if (params.isEmpty()) {
            throw new FlexLinkException(Result.INVALID_USAGE, "build: no parameter registered");
        }
        if (cast != null) {
            for (Parameter p : params) {
                if (p.type() != DataType.FLOAT32) {
                    throw bad("cast: converts FLOAT32 gradients only, but parameter " + p + " is " + p.type());
                }
            }
        }
        FlexLinkConfig c = config != null ? config : FlexLinkConfig.fromEnvironment();
        long first = firstCap != null ? firstCap : c.get(FlexLinkConfig.DDP_FIRST_BUCKET_CAP);
        long later = cap != null ? cap : c.get(FlexLinkConfig.DDP_BUCKET_CAP);
        RuntimeStream s;
        boolean owns = commStream == null;
        if (owns) {
            s = backend.createStream(comm.device(), "ddp.comm");
        } else {
            try {
                s = backend.runtimeStream(commStream);
            } catch (FlexLinkException e) {
                throw bad("commStream: " + e.detail());
            }
            if (s.device() != comm.device()) {
                throw bad("commStream: on device " + s.device() + ", but the communicator is on device "
                        + comm.device());
            }
        }
        built = true;
        DdpOptions options = new DdpOptions(op, scale, first, later, findUnused, rebuild, cast);
        return new GradientBuckets(this, options, s, owns);
    }

    Object owner() {
        return owner;
    }

    Communicator comm() {
        return comm;
    }

    Backend backend() {
        return backend;
    }

    List<Parameter> parameters() {
        return Collections.unmodifiableList(new ArrayList<>(params));
    }

    private void open() {
        if (built) {
            throw new FlexLinkException(Result.INVALID_USAGE, "builder: already built; start a new one");
        }
    }

    private static long positive(String argument, long bytes) {
        if (bytes <= 0) {
            throw bad(argument + ": must be positive, got " + bytes);
        }
        return bytes;
    }

    private static FlexLinkException bad(String message) {
        return new FlexLinkException(Result.INVALID_ARGUMENT, message);
    }
}
