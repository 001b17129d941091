package io.github.okretry.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetAddress;
import java.util.List;
import okhttp3.Dns;
import okhttp3.HttpUrl;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** {@link FreshRoutes}: which origin moves, when it moves again, and the order of its addresses. */
@Tag("unit")
class FreshRoutesTest {

  static final HttpUrl URL = HttpUrl.get("https://api.example.com/orders");
  static final InetAddress A = address(1);
  static final InetAddress B = address(2);
  static final InetAddress C = address(3);
  static final Dns CLIENT = host -> List.of(A, B, C);

  static InetAddress address(int last) {
    try {
      return InetAddress.getByAddress("api.example.com", new byte[] {10, 0, 0, (byte) last});
    } catch (java.net.UnknownHostException e) {
      throw new AssertionError(e);
    }
  }

  @Test
  void noRouteUntilASharedConnectionFails() {
    FreshRoutes routes = new FreshRoutes(8);
    assertThat(routes.route(URL, CLIENT)).isNull();
  }

  @Test
  void aFailureOnTheClientsConnectionMovesThatOriginOnly() throws Exception {
    FreshRoutes routes = new FreshRoutes(8);
    routes.failedOn(URL, CLIENT, CLIENT, A);
    Dns moved = routes.route(URL, CLIENT);
    assertThat(moved).isNotNull().isNotSameAs(CLIENT);
    assertThat(routes.route(HttpUrl.get("https://api.example.com/other/path"), CLIENT))
        .as("the same origin, another path")
        .isSameAs(moved);
    assertThat(routes.route(HttpUrl.get("http://api.example.com/orders"), CLIENT))
        .as("another scheme")
        .isNull();
    assertThat(routes.route(HttpUrl.get("https://api.example.com:8443/orders"), CLIENT))
        .as("another port")
        .isNull();
    assertThat(routes.route(URL, host -> List.of(A))).as("a chain with another Dns").isNull();
    assertThat(moved.lookup("api.example.com")).containsExactly(B, C, A);
  }

  @Test
  void manyFailuresOnOneConnectionMoveTheOriginOnce() {
    FreshRoutes routes = new FreshRoutes(8);
    routes.failedOn(URL, CLIENT, CLIENT, A);
    Dns moved = routes.route(URL, CLIENT);
    // Other calls that were on the client's connection fail after the move: no second move
    routes.failedOn(URL, CLIENT, CLIENT, A);
    routes.failedOn(URL, CLIENT, CLIENT, A);
    assertThat(routes.route(URL, CLIENT)).isSameAs(moved);
  }

  @Test
  void aFailureOnTheNewRouteMovesItAgainAndTheLatestFailedGoesLast() throws Exception {
    FreshRoutes routes = new FreshRoutes(8);
    routes.failedOn(URL, CLIENT, CLIENT, A);
    Dns first = routes.route(URL, CLIENT);
    routes.failedOn(URL, first, CLIENT, B);
    Dns second = routes.route(URL, CLIENT);
    assertThat(second).isNotSameAs(first);
    assertThat(second.lookup("api.example.com")).containsExactly(C, A, B);
    // A late failure on the first route (already moved past) changes nothing
    routes.failedOn(URL, first, CLIENT, C);
    assertThat(routes.route(URL, CLIENT)).isSameAs(second);
  }

  @Test
  void oneAddressIsLookedUpAsItIs() throws Exception {
    FreshRoutes routes = new FreshRoutes(8);
    Dns one = host -> List.of(A);
    routes.failedOn(URL, one, one, A);
    assertThat(routes.route(URL, one).lookup("api.example.com")).containsExactly(A);
  }

  @Test
  void anUnknownAddressStillMovesTheOrigin() throws Exception {
    FreshRoutes routes = new FreshRoutes(8);
    routes.failedOn(URL, CLIENT, CLIENT, null); // an unresolved proxy address
    assertThat(routes.route(URL, CLIENT).lookup("api.example.com")).containsExactly(A, B, C);
  }

  @Test
  void twoOriginsInOneSlotTakeTurns() {
    FreshRoutes routes = new FreshRoutes(1); // every origin in the one slot
    HttpUrl other = HttpUrl.get("https://other.example.com/");
    routes.failedOn(URL, CLIENT, CLIENT, A);
    routes.failedOn(other, CLIENT, CLIENT, A);
    assertThat(routes.route(other, CLIENT)).isNotNull();
    assertThat(routes.route(URL, CLIENT)).as("its route replaced: the client's own").isNull();
  }

  @Test
  void theTableSizeIsAPowerOfTwo() {
    assertThatThrownBy(() -> new FreshRoutes(0)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new FreshRoutes(3))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("3");
  }
}
