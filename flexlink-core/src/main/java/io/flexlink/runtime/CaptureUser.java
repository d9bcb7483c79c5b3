package io.flexlink.runtime;

/**
 * Something whose work a graph captured ({@link RuntimeStream#capturedBy}), such as a communicator: its
 * staging and scratch memory must outlive every replay, so the graph asks it before each launch.
 */
public interface CaptureUser {
    /** Null while a replay of its captured work is safe; else what was released (a closed communicator). */
    String released();
}
