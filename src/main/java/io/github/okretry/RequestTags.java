package io.github.okretry;

import kotlin.jvm.JvmClassMappingKt;
import kotlin.reflect.KClass;
import okhttp3.Request;
import org.jspecify.annotations.Nullable;

/**
 * Reads okretry's request tags. OkHttp 5's {@code Request.tag(Class)} wraps the class in a new
 * {@code KClass} on every lookup; every call looks up two tags, so reading them through these
 * constants keeps those lookups free of allocations (32 B per GET otherwise): a successful GET
 * allocates 24 B of okretry's own, the node of {@link RetryInterceptor}'s call tag (measured in
 * docs/performance.md). Kotlin's standard library is on every OkHttp classpath and a declared
 * dependency of okretry.
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
