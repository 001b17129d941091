package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import org.junit.jupiter.api.Test;

/**
 * Issue 15.7: the exceptions of earlier attempts ride on the final one as suppressed, but in
 * bounded number: the first 3 and the last 5, with one marker counting those left out. On fake
 * time with a scripted failure, so 50 000 retries take a second.
 */
class SuppressedHistoryTest {

  /** Fails every attempt with a new, numbered exception, keeping none of them itself. */
  static final class AlwaysTimesOut implements okhttp3.Interceptor {
    int attempts;

    @Override
    public okhttp3.Response intercept(Chain chain) throws IOException {
      throw new SocketTimeoutException("timeout " + ++attempts);
    }
  }

  static IOException failAfter(int maxRetries) {
    AlwaysTimesOut server = new AlwaysTimesOut();
    RetryInterceptor retry = RetryInterceptor.builder()
        .timeSource(new FakeTime())
        .maxRetries(maxRetries)
        .maxDelay(Duration.ofMillis(1))
        .retryBudget(RetryBudget.unlimited())
        .build();
    OkHttpClient client = new OkHttpClient.Builder().addInterceptor(retry).addInterceptor(server).build();
    Request request = new Request.Builder().url("http://example.test/").build();
    List<IOException> thrown = new ArrayList<>();
    assertThatThrownBy(() -> client.newCall(request).execute())
        .isInstanceOf(SocketTimeoutException.class)
        .satisfies(e -> thrown.add((IOException) e));
    assertThat(server.attempts).isEqualTo(maxRetries + 1);
    return thrown.get(0);
  }

  static List<String> messages(Throwable[] suppressed) {
    List<String> out = new ArrayList<>();
    for (Throwable t : suppressed) out.add(t.getMessage());
    return out;
  }

  @Test
  void fiftyThousandRetriesLeaveNineSuppressed() {
    IOException last = failAfter(50_000);
    assertThat(last).hasMessage("timeout 50001");
    assertThat(messages(last.getSuppressed())).containsExactly(
        "timeout 1", "timeout 2", "timeout 3",
        "okretry: 49992 earlier failures omitted (failures 4 to 49995); the first 3 and the last 5 are kept",
        "timeout 49996", "timeout 49997", "timeout 49998", "timeout 49999", "timeout 50000");
    assertThat(last.getSuppressed()[3]).isInstanceOf(IOException.class);
    assertThat(last.getSuppressed()[3].getStackTrace()).isEmpty();
  }

  @Test
  void upToEightEarlierFailuresAreAllKeptWithoutAMarker() {
    assertThat(messages(failAfter(8).getSuppressed())).containsExactly(
        "timeout 1", "timeout 2", "timeout 3", "timeout 4", "timeout 5", "timeout 6", "timeout 7", "timeout 8");
    assertThat(messages(failAfter(9).getSuppressed())).containsExactly(
        "timeout 1", "timeout 2", "timeout 3",
        "okretry: 1 earlier failure omitted (failure 4); the first 3 and the last 5 are kept",
        "timeout 5", "timeout 6", "timeout 7", "timeout 8", "timeout 9");
  }
}
