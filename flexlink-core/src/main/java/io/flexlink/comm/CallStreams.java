package io.flexlink.comm;

import io.flexlink.launch.GroupedCalls;
import io.flexlink.plan.CallPlan;
import io.flexlink.runtime.RuntimeStream;

/** The stream of a group's sends and receives on a {@link FlexCommunicator}. */
final class CallStreams {
    private CallStreams() {
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
