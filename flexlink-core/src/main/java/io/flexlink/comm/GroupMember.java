package io.flexlink.comm;

import io.flexlink.launch.Groups;
import java.util.function.DoubleSupplier;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * A {@link FlexCommunicator}'s part in a group's end: its two launch phases, and the discarding and the estimate of
 * its recorded calls, both under its call lock ({@code locked}), since a group ends on the thread that ends it.
 */
final class GroupMember implements Groups.Member {
    private final Runnable primary;
    private final Runnable auxiliary;
    private final Function<Supplier<Object>, Object> locked;
    private final DoubleSupplier estimate;
    private final Runnable clear;
    private final Runnable release;

    GroupMember(Runnable primary, Runnable auxiliary, Function<Supplier<Object>, Object> locked,
                DoubleSupplier estimate, Runnable clear, Runnable release) {
        this.primary = primary;
        this.auxiliary = auxiliary;
        this.locked = locked;
        this.estimate = estimate;
        this.clear = clear;
        this.release = release;
    }

    @Override
    public void releaseHeld() {
        release.run();
    }

    @Override
    public void launchPrimary() {
        primary.run();
    }

    @Override
    public void launchAuxiliary() {
        auxiliary.run();
    }

    @Override
    public void discard() {
        locked.apply(() -> {
            clear.run();
            return null;
        });
    }

    @Override
    public double estimateSeconds() {
        return (Double) locked.apply(estimate::getAsDouble);
    }
}
