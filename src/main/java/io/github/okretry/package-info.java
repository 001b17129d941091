/**
 * okretry: retries for OkHttp calls that are worth retrying, without hurting the server.
 *
 * <p>Start with {@link io.github.okretry.RetryInterceptor} (blocking) or {@link
 * io.github.okretry.RetryingCallFactory} (waits without a thread), both configured by a {@link
 * io.github.okretry.RetryPolicy}. Per request, {@link io.github.okretry.IdempotencyKey} and {@link
 * io.github.okretry.RetryOverrides} tags; to observe, a {@link io.github.okretry.RetryListener}.
 *
 * <p>Nothing here is null unless marked {@code @Nullable}.
 */
@NullMarked
package io.github.okretry;

import org.jspecify.annotations.NullMarked;
