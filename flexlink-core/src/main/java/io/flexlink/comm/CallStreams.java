package io.flexlink.comm;

import io.flexlink.Stream;
import io.flexlink.launch.GroupedCalls;
import io.flexlink.plan.CallPlan;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.validate.Validator;

/** The stream checks of a call on a {@link FlexCommunicator}. */
final class CallStreams {
    private CallStreams() {
    }

    /** The backend's stream behind {@code userStream}, which must be one of {@code device}'s. */
    static RuntimeStream check(Backend backend, int device, Stream userStream) {
        if (userStream == null) {
            throw Validator.invalid("stream: null");
        }
        RuntimeStream stream = backend.runtimeStream(userStream);
        if (stream.device() != device) {
            throw Validator.invalid("stream: belongs to device " + stream.device()
                    + ", the communicator's device is " + device);
        }
        return stream;
    }

    /** The stream of the group's sends and receives so far, or null. */
    static RuntimeStream transfers(GroupedCalls grouped) {
        for (int i = 0; i < grouped.size(); i++) {
            CallPlan p = grouped.get(i);
            if (p.call.collective.pointToPoint()) {
                return p.call.stream;
            }
        }
        return null;
    }
}
