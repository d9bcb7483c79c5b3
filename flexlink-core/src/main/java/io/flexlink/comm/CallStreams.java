package io.flexlink.comm;

import io.flexlink.Collective;
import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.launch.GroupedCalls;
import io.flexlink.launch.Groups;
import io.flexlink.plan.CallPlan;
import io.flexlink.runtime.RuntimeStream;

/** A group's calls on a {@link FlexCommunicator}: from one thread, and its sends and receives on one stream. */
final class CallStreams {
    private CallStreams() {
    }

    /** Before call {@code c} on {@code stream} joins {@code grouped}, the calls of {@code group} so far. */
    static void checkGroup(GroupedCalls grouped, Groups group, Collective c, RuntimeStream stream, int rank) {
        if (!grouped.isEmpty() && grouped.owner() != group) {
            throw new FlexLinkException(Result.INVALID_USAGE, "communicator: rank " + rank + " has calls in "
                    + "another thread's open group; one communicator's group calls come from one thread");
        }
        if (c.pointToPoint()) {
            RuntimeStream other = transfers(grouped);
            if (other != null && other != stream) {
                throw new FlexLinkException(Result.INVALID_USAGE, "stream: the sends and receives of one group "
                        + "on one communicator run on one stream; rank " + rank + " used " + other.label()
                        + " and " + stream.label());
            }
        }
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
