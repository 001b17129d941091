package io.github.okretry;

import kotlin.jvm.JvmClassMappingKt;
import kotlin.reflect.KClass;
import okhttp3.Request;
import org.jspecify.annotations.Nullable;

/**
 * Reads okretry's request tags. OkHttp 5's {@code Request.tag(Class)} wraps the class in a new
 * {@code KClass} on every lookup; every call looks up two tags, so reading them through these
 * constants is what keeps a successful call free of okretry allocations (measured in
 * docs/performance.md: 32 B per GET otherwise). Kotlin's standard library is on every OkHttp
 * classpath and a declared dependency of okretry.
 */
final class RequestTags {

  private static final KClass<RetryOverrides> OVERRIDES =
      JvmClassMappingKt.getKotlinClass(RetryOverrides.class);
  private static final KClass<IdempotencyKey> IDEMPOTENCY_KEY =
      JvmClassMappingKt.getKotlinClass(IdempotencyKey.class);

  private RequestTags() {}

  static @Nullable RetryOverrides overrides(Request request) {
    return request.tag(OVERRIDES);
  }

  static @Nullable IdempotencyKey idempotencyKey(Request request) {
    return request.tag(IDEMPOTENCY_KEY);
  }
}
