package io.flexlink.bench.ddp;

/** How a step synchronizes its gradients; the arithmetic of a step is the same in every mode. */
enum StepMode {
    /** Each layer's gradients are marked ready as soon as backward has enqueued them: AllReduce overlaps backward. */
    OVERLAP("overlapped"),
    /** Every gradient is marked ready after the whole backward: each AllReduce runs after backward. */
    AFTER_BACKWARD("AllReduce after backward"),
    /** No gradient synchronization at all (timing only: the ranks' models drift apart). */
    COMPUTE_ONLY("compute only");

    final String text;

    StepMode(String text) {
        this.text = text;
    }
}
