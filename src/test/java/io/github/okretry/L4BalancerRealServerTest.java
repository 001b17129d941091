package io.github.okretry;

import io.github.okretry.L4Scenarios.Front;
import io.github.okretry.L4Scenarios.Scenario;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Issue 44 behind a real HAProxy ({@link HaProxy}: {@code mode tcp}, {@code balance roundrobin}),
 * every {@link L4Scenarios} scenario against the targets; {@link L4BalancerIntegrationTest}
 * runs the same ones behind the in-process balancer in the default run. Skipped where HAProxy is
 * not installed. Soak, as the other measurements against a real server:
 *
 * <pre>
 * mvn -B test -Dokretry.excludedGroups= -Dgroups=soak -Dtest=L4BalancerRealServerTest -Dokretry.printTables=true
 * </pre>
 */
@Tag("soak")
@ExtendWith(LeakCheck.class)
class L4BalancerRealServerTest {

  @BeforeAll
  static void haProxyIsInstalled() {
    Assumptions.assumeTrue(HaProxy.available(), "no HAProxy at " + HaProxy.BINARY);
  }

  static List<Scenario> scenarios() {
    return L4Scenarios.all();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("scenarios")
  void aRetryReachesTheHealthyReplica(Scenario scenario) throws Exception {
    L4Scenarios.assertTargets(
        L4Scenarios.run("HAProxy", L4BalancerRealServerTest::front, scenario));
  }

  static Front front(int... ports) throws Exception {
    HaProxy haProxy = HaProxy.start(ports);
    return new Front() {
      @Override
      public int port() {
        return haProxy.port();
      }

      @Override
      public void close() throws Exception {
        haProxy.close();
      }
    };
  }
}
