package io.github.okretry;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import java.util.Arrays;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The dependency rule of docs/architecture.md: drivers → call state → policy → internal. The
 * drivers run calls and do all I/O; the call state ({@code LogicalCall}) decides for one call; the
 * policy layer holds settings, shared state, the rules and listener plumbing; internal holds the
 * pure pieces and seams and names nothing of the main package. A new class must be given a layer
 * here, or the test fails.
 */
@Tag("unit")
class ArchitectureTest {

  static final JavaClasses MAIN =
      new ClassFileImporter()
          .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
          .importPackages("io.github.okretry");

  static final String[] DRIVERS = {
    "RetryInterceptor",
    "BlockingLoop",
    "RetryingCallFactory",
    "RetryingCall",
    "AsyncLoop",
    "AttemptSettings",
    "DeadlineWatch",
    "RetryAfterGuard",
    "ConnectionCheck"
  };
  static final String[] CALL_STATE = {
    "LogicalCall",
    "OriginTurn",
    "CallFailures",
    "HeldResponse",
    "Step",
    "Attempt",
    "Seen",
    "Hedging",
    "CallRecord"
  };
  static final String[] POLICY = {
    "RetryPolicy",
    "Settings",
    "HedgingPolicy",
    "RetryBudget",
    "RetryOverrides",
    "IdempotencyKey",
    "IdempotencyKeys",
    "RetryListener",
    "RetryPredicate",
    "GiveUpReason",
    "Jitter",
    "QuotaPacing",
    "Events",
    "RequestTags",
    "RetryRules",
    "Decision",
    "Classifier",
    "RetryOutcome",
    "PolicyExplanation"
  };

  /** These top-level classes of the main package, with their nested and anonymous classes. */
  static DescribedPredicate<JavaClass> classes(String... simpleNames) {
    return DescribedPredicate.describe(
        Arrays.toString(simpleNames),
        c ->
            Arrays.stream(simpleNames)
                .anyMatch(
                    name -> {
                      String top = "io.github.okretry." + name;
                      return c.getName().equals(top) || c.getName().startsWith(top + "$");
                    }));
  }

  @Test
  void layersDependOnlyDownwards() {
    layeredArchitecture()
        .consideringOnlyDependenciesInLayers()
        .ensureAllClassesAreContainedInArchitectureIgnoring(
            DescribedPredicate.describe(
                "package-info", c -> c.getSimpleName().equals("package-info")))
        .layer("Drivers")
        .definedBy(classes(DRIVERS))
        .layer("CallState")
        .definedBy(classes(CALL_STATE))
        .layer("Policy")
        .definedBy(classes(POLICY))
        .layer("Internal")
        .definedBy("io.github.okretry.internal..")
        .whereLayer("Drivers")
        .mayNotBeAccessedByAnyLayer()
        .whereLayer("CallState")
        .mayOnlyBeAccessedByLayers("Drivers")
        .whereLayer("Policy")
        .mayOnlyBeAccessedByLayers("Drivers", "CallState")
        .whereLayer("Internal")
        .mayOnlyBeAccessedByLayers("Drivers", "CallState", "Policy")
        .check(MAIN);
  }

  @Test
  void internalNeverUsesTheMainPackage() {
    // Not even its public value types: internal takes plain values, so the packages form no circle.
    noClasses()
        .that()
        .resideInAPackage("io.github.okretry.internal..")
        .should()
        .dependOnClassesThat()
        .resideInAPackage("io.github.okretry")
        .check(MAIN);
  }

  @Test
  void theBlockingDriverNeverNamesTheFactory() {
    // The factory hands its interceptor a time source whose waits its close() ends, so the
    // blocking driver stands beside the async one, not under it.
    noClasses()
        .that(classes("RetryInterceptor", "BlockingLoop"))
        .should()
        .dependOnClassesThat(classes("RetryingCallFactory", "RetryingCall", "AsyncLoop"))
        .check(MAIN);
  }

  @Test
  void noOkHttpInternals() {
    noClasses()
        .that()
        .resideInAPackage("io.github.okretry..")
        .should()
        .dependOnClassesThat()
        .resideInAPackage("okhttp3.internal..")
        .because("okhttp3.internal is not OkHttp's API and is closed on the module path")
        .check(MAIN);
  }
}
