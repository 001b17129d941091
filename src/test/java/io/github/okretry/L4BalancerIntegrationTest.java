package io.github.okretry;

import io.github.okretry.L4Scenarios.Front;
import io.github.okretry.L4Scenarios.Scenario;
import io.github.okretry.examples.TcpBalancer;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Issue 44 behind an in-process round-robin L4 balancer ({@link TcpBalancer}), so that the default
 * run needs no HAProxy: every {@link L4Scenarios} scenario, asserted against the targets
 * (at least 99 of 100 calls through, at most 2.1 requests a call). {@link L4BalancerRealServerTest}
 * runs the same scenarios behind a real HAProxy. The table:
 *
 * <pre>
 * mvn -B test -Dtest=L4BalancerIntegrationTest -Dokretry.printTables=true
 * </pre>
 */
@Tag("integration")
@Tag("slow") // real sockets and real time: in mvn test, but left out of mutation testing
@ExtendWith(LeakCheck.class)
class L4BalancerIntegrationTest {

  static List<Scenario> scenarios() {
    return L4Scenarios.all();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("scenarios")
  void aRetryReachesTheHealthyReplica(Scenario scenario) throws Exception {
    L4Scenarios.assertTargets(
        L4Scenarios.run("TcpBalancer", L4BalancerIntegrationTest::front, scenario));
  }

  static Front front(int... ports) throws Exception {
    TcpBalancer balancer = TcpBalancer.start(ports);
    return new Front() {
      @Override
      public int port() {
        return balancer.port();
      }

      @Override
      public void close() throws Exception {
        balancer.close();
      }
    };
  }
}
