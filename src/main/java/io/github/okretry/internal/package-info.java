/**
 * okretry's internals: NOT public API, not covered by compatibility guarantees. Classes here are
 * public only so that {@code io.github.okretry} can use them across packages; they may change or
 * disappear in any release, the module descriptor does not export this package, and the Javadoc
 * leaves it out.
 *
 * <p>Pure pieces with their inputs passed in: {@link io.github.okretry.internal.Backoff}, {@link
 * io.github.okretry.internal.RetryAfter}, {@link io.github.okretry.internal.CallDeadline}; shared
 * state: {@link io.github.okretry.internal.OriginGate}; seams: {@link
 * io.github.okretry.internal.TimeSource}, {@link io.github.okretry.internal.WallClock}, {@link
 * io.github.okretry.internal.RandomSource}, {@link io.github.okretry.internal.KeyGenerator}.
 * Nothing here names a class of {@code io.github.okretry}: internal takes plain values ({@code
 * ArchitectureTest}).
 */
@NullMarked
package io.github.okretry.internal;

import org.jspecify.annotations.NullMarked;
