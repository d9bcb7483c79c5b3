package io.flexlink.arch;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/**
 * Keeps the package arrows of the design (docs/design.md): the stages of a call, validate → plan →
 * launch → path → sync, depend only inward, on the balancer and the runtime SPI; the engine's logic can be
 * tested without native code; and no two packages depend on each other. {@code io.flexlink.FlexLink} is
 * the composition root: the API's value types depend on nothing inside, and nothing inside depends on the
 * composition root, so it closes no cycle.
 */
class PackageArrowsTest {
    private static final JavaClasses CORE = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("io.flexlink");

    private static void only(String pkg, String... allowed) {
        String[] all = new String[allowed.length + 4];
        all[0] = pkg;
        all[1] = "io.flexlink";
        all[2] = "java..";
        all[3] = "org.slf4j..";
        System.arraycopy(allowed, 0, all, 4, allowed.length);
        classes().that().resideInAPackage(pkg).should().onlyDependOnClassesThat().resideInAnyPackage(all)
                .allowEmptyShould(true).check(CORE);
    }

    @Test
    void noPackageCycles() {
        slices().matching("io.flexlink.(**)").should().beFreeOfCycles().check(CORE);
    }

    @Test
    void configUsesOnlyTheApi() {
        only("io.flexlink.config");
    }

    @Test
    void validationUsesTheApiAndAsksTheRuntimeAboutMemory() {
        only("io.flexlink.validate", "io.flexlink.runtime");
    }

    @Test
    void thePlanIsArithmeticOnTheCall() {
        only("io.flexlink.plan", "io.flexlink.path");
    }

    @Test
    void theLaunchStagesUseThePlanThePathsAndTheBalancer() {
        only("io.flexlink.launch", "io.flexlink.plan", "io.flexlink.path", "io.flexlink.balance",
                "io.flexlink.runtime");
    }

    @Test
    void theBalancerMeasuresThroughTheSpiOnly() {
        only("io.flexlink.balance", "io.flexlink.config", "io.flexlink.runtime");
    }

    @Test
    void runtimeSpiUsesConfigAndRawMemoryOnly() {
        only("io.flexlink.runtime", "io.flexlink.config", "sun.misc");
    }

    @Test
    void syncUsesTheRuntimeSpi() {
        only("io.flexlink.sync", "io.flexlink.runtime");
    }

    @Test
    void hostBackendImplementsTheSpi() {
        only("io.flexlink.runtime.host", "io.flexlink.runtime", "io.flexlink.runtime.shm", "io.flexlink.sync",
                "io.flexlink.config", "sun.misc");
    }

    @Test
    void sharedMemoryFilesUseOnlyNativeMemory() {
        only("io.flexlink.runtime.shm", "io.flexlink.runtime", "sun.misc");
    }

    @Test
    void pathsUseRuntimeSyncAndConfig() {
        only("io.flexlink.path", "io.flexlink.runtime", "io.flexlink.sync", "io.flexlink.config");
    }

    @Test
    void bootstrapUsesTheRuntime() {
        only("io.flexlink.bootstrap", "io.flexlink.runtime", "io.flexlink.config");
    }

    @Test
    void hierarchyComposesCommunicatorsOverTheEngineAndTheRendezvous() {
        only("io.flexlink.hier", "io.flexlink.validate", "io.flexlink.comm", "io.flexlink.launch", "io.flexlink.bootstrap",
                "io.flexlink.runtime", "io.flexlink.runtime.host", "io.flexlink.config");
        // of the engine, only its public entry points: creating a communicator (or a split's child), the base
        // class of both communicators (split, shrink, grow), and the thread's group (whose member a multi-node
        // communicator is for its Send and Recv between nodes)
        classes().that().resideInAPackage("io.flexlink.hier").should().onlyDependOnClassesThat(
                com.tngtech.archunit.base.DescribedPredicate.describe("not the engine's inside",
                        (com.tngtech.archunit.core.domain.JavaClass c) -> !c.getPackageName().equals("io.flexlink.comm")
                                && !c.getPackageName().equals("io.flexlink.launch")
                                || c.getSimpleName().equals("CommunicatorFactory") || c.getSimpleName().startsWith("CommSplitter")
                                || c.getSimpleName().equals("ParentCommunicator") || c.getName().startsWith("io.flexlink.launch.Groups")))
                .check(CORE);
        // of the host backend, only the parser of the emulated links (the rail's rate)
        noClasses().that().resideInAPackage("io.flexlink.hier").should().dependOnClassesThat(
                com.tngtech.archunit.base.DescribedPredicate.describe("host backend classes but Emulation",
                        (com.tngtech.archunit.core.domain.JavaClass c) -> c.getPackageName().equals("io.flexlink.runtime.host")
                                && !c.getSimpleName().equals("Emulation")))
                .check(CORE);
    }

    @Test
    void onlyTheEntryPointUsesTheHierarchy() {
        noClasses().that().resideOutsideOfPackages("io.flexlink.hier").and().doNotHaveSimpleName("FlexLink")
                .should().dependOnClassesThat().resideInAPackage("io.flexlink.hier").check(CORE);
    }

    @Test
    void topologyUsesTheRuntime() {
        only("io.flexlink.topo", "io.flexlink.runtime");
    }

    @Test
    void verificationUsesNumericFormatsOnly() {
        only("io.flexlink.verify", "io.flexlink.runtime.host");
    }

    @Test
    void backendDiscoveryUsesTheSpiAndTheHostBackend() {
        only("io.flexlink.backend", "io.flexlink.runtime", "io.flexlink.runtime.host", "io.flexlink.config");
    }

    @Test
    void apiValueTypesDependOnNothingInside() {
        noClasses().that().resideInAPackage("io.flexlink").and().doNotHaveFullyQualifiedName("io.flexlink.FlexLink")
                .should().dependOnClassesThat().resideOutsideOfPackages("io.flexlink", "java..", "org.slf4j..")
                .check(CORE);
    }

    @Test
    void nothingDependsOnTheCompositionRoot() {
        noClasses().that().doNotHaveFullyQualifiedName("io.flexlink.FlexLink")
                .should().dependOnClassesThat().haveFullyQualifiedName("io.flexlink.FlexLink")
                .check(CORE);
    }

    @Test
    void nothingInsideDependsOnTheEngine() {
        noClasses().that().resideOutsideOfPackages("io.flexlink", "io.flexlink.comm..", "io.flexlink.hier")
                .should().dependOnClassesThat().resideInAPackage("io.flexlink.comm..")
                .check(CORE);
    }
}
