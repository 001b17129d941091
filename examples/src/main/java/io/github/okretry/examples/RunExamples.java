package io.github.okretry.examples;

import java.lang.reflect.Method;
import java.util.List;

/** Runs every example in sequence (or the ones named as arguments): the README's demo command. */
public final class RunExamples {
  /** In the order a newcomer should read them. */
  static final List<String> ALL =
      List.of(
          "FlakyGet",
          "RetryAfterExample",
          "PaymentExample",
          "StreamedUploadExample",
          "DeadlineExample",
          "PerRequestExample",
          "OutcomeExample",
          "JitterHistogramExample",
          "SickReplicaExample",
          "RetrofitExample",
          "MicrometerExample",
          "OpenTelemetryExample");

  public static void main(String[] args) throws Exception {
    List<String> names = args.length > 0 ? List.of(args) : ALL;
    for (String name : names) {
      System.out.println("=== " + name + " ===");
      Class<?> example = Class.forName(RunExamples.class.getPackageName() + "." + name);
      Method main = example.getMethod("main", String[].class);
      main.invoke(null, (Object) new String[0]);
      System.out.println();
    }
  }
}
