package io.flexlink.ddp.host;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.PinnedMemory;
import io.flexlink.runtime.RuntimeEvent;
import io.flexlink.runtime.RuntimeStream;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs Java code in stream order on the host backend, built from the runtime SPI alone (like
 * {@code cuLaunchHostFunc}): the stream records an event and then waits for a counter; a worker thread
 * waits for the event, runs the task, and writes the counter. The stream therefore runs the task between
 * the work enqueued before it and the work enqueued after it, and the enqueuing thread never waits.
 *
 * <p>Tasks run one at a time, in the order they were enqueued, so one counter that only grows serves all
 * of them (task {@code k} releases waits for {@code >= k}). Use one instance per stream: a task waits for
 * its own stream only, and tasks of two streams that wait on each other could block the single worker.
 * Task objects are pooled: once the pool covers the tasks in flight, enqueuing allocates nothing.
 */
final class HostStreamTasks implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(HostStreamTasks.class);
    /** Most tasks in flight; beyond it, enqueuing waits for the oldest to run. */
    static final int CAPACITY = 4096;

    /** What a task does with its three numbers. */
    interface Body {
        void run(int kind, long src, long dst, long count);
    }

    private final Backend backend;
    private final int device;
    private final Body body;
    private final PinnedMemory counter;
    private final ArrayBlockingQueue<Task> queued = new ArrayBlockingQueue<>(CAPACITY);
    private final ArrayBlockingQueue<Task> free = new ArrayBlockingQueue<>(CAPACITY);
    private final List<Task> all = new ArrayList<>();
    private final Thread worker;
    private int issued;

    HostStreamTasks(Backend backend, int device, Body body, String name) {
        this.backend = backend;
        this.device = device;
        this.body = body;
        this.counter = backend.allocatePinned(64);
        this.worker = new Thread(this::work, "flexlink-" + name + "-" + device);
        this.worker.setDaemon(true);
        this.worker.start();
    }

    /** Enqueues {@code body.run(kind, src, dst, count)} on {@code stream}. */
    void enqueue(RuntimeStream stream, int kind, long src, long dst, long count) {
        Task t = free.poll();
        if (t == null) {
            t = new Task(backend.createEvent(device, false));
            all.add(t);
        }
        t.stream = stream;
        t.kind = kind;
        t.src = src;
        t.dst = dst;
        t.count = count;
        t.seq = ++issued;
        stream.record(t.event);
        try {
            queued.put(t);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new FlexLinkException(Result.SYSTEM_ERROR, "host task: interrupted while enqueuing");
        }
        stream.waitValue32(counter, 0, t.seq);
    }

    private void work() {
        while (true) {
            Task t;
            try {
                t = queued.take();
                t.event.synchronize();
            } catch (InterruptedException | FlexLinkException e) {
                return; // closed
            }
            // a failed stream skips its copies and waits, and may free the memory once it is idle: skip the task too
            if (t.stream.failure() == null) {
                try {
                    body.run(t.kind, t.src, t.dst, t.count);
                } catch (RuntimeException e) {
                    LOG.warn("host task failed: {}", e.toString());
                }
            }
            int seq = t.seq;
            free.add(t);
            counter.writeCounter(0, seq);
        }
    }

    @Override
    public void close() {
        worker.interrupt();
        try {
            worker.join(1000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        for (Task t : all) {
            t.event.close();
        }
        counter.close();
    }

    /** One task; reused once it ran. */
    private static final class Task {
        final RuntimeEvent event;
        RuntimeStream stream;
        int kind;
        long src;
        long dst;
        long count;
        int seq;

        Task(RuntimeEvent event) {
            this.event = event;
        }
    }
}
