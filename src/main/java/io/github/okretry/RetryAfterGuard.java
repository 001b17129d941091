package io.github.okretry;

import java.io.IOException;
import okhttp3.Interceptor;
import okhttp3.Response;

/**
 * A network interceptor that saturates a numeric {@code Retry-After} too large for an int.
 *
 * <p>OkHttp's own follow-up logic reads a 503's {@code Retry-After} with {@code Integer.valueOf},
 * so a hostile or buggy server sending {@code Retry-After: 99999999999} makes the call fail with an
 * unchecked {@link NumberFormatException} before any interceptor above sees the response. Rewriting
 * such a value to {@value #SATURATED} seconds (68 years) keeps its meaning, "far too long", which
 * okretry then handles as any Retry-After above {@code maxRetryAfter}.
 */
final class RetryAfterGuard implements Interceptor {

  static final RetryAfterGuard INSTANCE = new RetryAfterGuard();
  static final String SATURATED = "2147483647";

  private RetryAfterGuard() {}

  @Override
  public Response intercept(Chain chain) throws IOException {
    Response response = chain.proceed(chain.request());
    String value = response.header("Retry-After");
    if (value == null || !overflowsInt(value)) return response;
    return response.newBuilder().header("Retry-After", SATURATED).build();
  }

  /** True for the values OkHttp would try to parse as an int ({@code \d+}) and fail on. */
  static boolean overflowsInt(String value) {
    int n = value.length();
    if (n < 10) return false;
    for (int i = 0; i < n; i++) {
      char c = value.charAt(i);
      if (c < '0' || c > '9') return false;
    }
    int start = 0;
    while (start < n - 1 && value.charAt(start) == '0') start++;
    int digits = n - start;
    return digits > 10 || (digits == 10 && value.substring(start).compareTo(SATURATED) > 0);
  }

  @Override
  public String toString() {
    return "RetryAfterGuard";
  }
}
