package io.github.okretry.internal;

import static org.assertj.core.api.Assertions.assertThat;

import okhttp3.Call;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@link SendTracker}: an attempt counts as sent once its request headers were written whole.
 * Through the interceptor, per attempt: {@code SafeToRepeatIntegrationTest}.
 */
@Tag("unit")
class SendTrackerTest {
  static final Request REQUEST = new Request.Builder().url("http://example.invalid/").build();
  final OkHttpClient client = new OkHttpClient();

  @Test
  void sendTrackerFollowsTheAttempt() {
    Call call = client.newCall(REQUEST);
    SendTracker tracker = SendTracker.attach(call, null);
    assertThat(tracker.requestsThisAttempt()).isZero();
    tracker.requestHeadersStart(call);
    assertThat(tracker.requestsThisAttempt()).as("headers begun, not yet written whole").isZero();
    tracker.requestHeadersEnd(call, REQUEST);
    assertThat(tracker.requestsThisAttempt()).isEqualTo(1);
    tracker.reset();
    assertThat(tracker.requestsThisAttempt()).isZero();
  }
}
