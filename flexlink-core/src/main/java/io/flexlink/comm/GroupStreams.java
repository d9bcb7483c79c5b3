package io.flexlink.comm;

import io.flexlink.launch.GroupedCalls;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.RuntimeEvent;
import io.flexlink.runtime.RuntimeStream;
import java.util.ArrayList;
import java.util.List;

/**
 * The callers' streams of one communicator's calls in one group, joined as NCCL joins a group's streams: when there
 * are several, the group's work starts only after the work enqueued before it on every one of them, and each of
 * them continues only after all of the group's work. Both joins go through the first stream (each other stream
 * records, the first waits for all, records, and each waits for that), before the group's first fork and after its
 * last join; chained collectives on different streams are linked one to the next. A group on one stream, the usual
 * case, costs nothing. A group with a stream being captured is neither joined nor linked (as before these joins):
 * an event of one capture cannot be waited for outside it or inside another, and which capture a stream belongs to
 * is not asked. Used under the communicator's lock.
 */
final class GroupStreams implements AutoCloseable {
    private final Backend backend;
    private final int device;
    /**
     * The distinct streams of the current group, in the order its calls used them; empty when there is nothing to
     * join (one stream, or one of them being captured), and after the group.
     */
    private final List<RuntimeStream> streams = new ArrayList<>();
    /** One per stream position, grown on demand, for the joins at the group's start and end. */
    private final List<RuntimeEvent> events = new ArrayList<>();
    /** Orders one chained call's stream after the previous one's; created by the first link. */
    private RuntimeEvent link;

    GroupStreams(Backend backend, int device) {
        this.backend = backend;
        this.device = device;
    }

    /** Before the group's first fork: collects its streams and, if several, makes each wait for all the others. */
    void joinAtStart(GroupedCalls grouped) {
        streams.clear();
        for (int i = 0; i < grouped.size(); i++) {
            RuntimeStream s = grouped.get(i).call.stream;
            if (indexOf(s) < 0) {
                streams.add(s);
            }
        }
        if (streams.size() < 2 || anyCapturing()) {
            streams.clear();
            return;
        }
        joinAll();
    }

    /** Forgets the group's streams (its end, or its calls discarded): no reference outlives the group. */
    void forget() {
        streams.clear();
    }

    /** After the group's last join: each of its streams waits for the group's work on all the others. */
    void joinAtEnd() {
        if (!streams.isEmpty()) {
            joinAll();
            streams.clear();
        }
    }

    /**
     * A chained call on {@code next} after one on {@code previous}: {@code next} first waits for {@code previous}
     * (only in a group whose streams were joined: one stream needs no link, and a capture gets none).
     */
    void link(RuntimeStream previous, RuntimeStream next) {
        if (previous == null || previous == next || streams.isEmpty()) {
            return;
        }
        if (link == null) {
            link = backend.createEvent(device, false);
        }
        previous.record(link);
        next.waitEvent(link);
    }

    private void joinAll() {
        RuntimeStream hub = streams.get(0);
        for (int i = 1; i < streams.size(); i++) {
            streams.get(i).record(event(i));
            hub.waitEvent(event(i));
        }
        hub.record(event(0));
        for (int i = 1; i < streams.size(); i++) {
            streams.get(i).waitEvent(event(0));
        }
    }

    /** By identity, as the group's rule for its transfers' stream: a stream object is the stream. */
    private int indexOf(RuntimeStream s) {
        for (int i = 0; i < streams.size(); i++) {
            if (streams.get(i) == s) {
                return i;
            }
        }
        return -1;
    }

    private boolean anyCapturing() {
        for (RuntimeStream s : streams) {
            if (s.isCapturing()) {
                return true;
            }
        }
        return false;
    }

    private RuntimeEvent event(int i) {
        while (events.size() <= i) {
            events.add(backend.createEvent(device, false));
        }
        return events.get(i);
    }

    @Override
    public void close() {
        for (RuntimeEvent e : events) {
            e.close();
        }
        events.clear();
        if (link != null) {
            link.close();
            link = null;
        }
    }
}
