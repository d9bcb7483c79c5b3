package io.flexlink.ddp;

import static com.tngtech.archunit.core.domain.JavaClass.Predicates.equivalentTo;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import io.flexlink.runtime.host.FloatFormats;
import org.junit.jupiter.api.Test;

/**
 * The gradient buckets are built on the public API and the runtime SPI only, so that they run on any
 * backend: no engine package, no backend. The host-backend cast, which reads device
 * memory as host memory, lives apart in {@code ddp.host}.
 */
class DdpArrowsTest {
    private static final JavaClasses CORE = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("io.flexlink");

    @Test
    void bucketsUseTheApiTheSpiAndTheConfigOnly() {
        classes().that().resideInAPackage("io.flexlink.ddp").should().onlyDependOnClassesThat(
                resideInAnyPackage("io.flexlink.ddp", "io.flexlink", "io.flexlink.runtime", "io.flexlink.config",
                        "java..", "org.slf4j..").or(equivalentTo(FloatFormats.class))).check(CORE);
    }

    @Test
    void theHostCastUsesTheBucketsTheSpiAndTheNumericFormats() {
        classes().that().resideInAPackage("io.flexlink.ddp.host").should().onlyDependOnClassesThat(
                resideInAnyPackage("io.flexlink.ddp..", "io.flexlink", "io.flexlink.runtime", "java..", "org.slf4j..",
                        "sun.misc").or(equivalentTo(FloatFormats.class))).check(CORE);
    }
}
