package io.github.okretry.internal;

import static java.lang.annotation.ElementType.CONSTRUCTOR;
import static java.lang.annotation.ElementType.METHOD;
import static java.lang.annotation.ElementType.TYPE;
import static java.lang.annotation.RetentionPolicy.CLASS;

import java.lang.annotation.Documented;
import java.lang.annotation.Retention;
import java.lang.annotation.Target;

/**
 * Tells animal-sniffer that the annotated member may use an API missing from Java 8 or Android API
 * 21, as OkHttp's own annotation of the same name does: a {@code java.time.Duration} overload
 * beside a {@code (long, TimeUnit)} one, which only callers that have {@code java.time} can reach.
 */
@Documented
@Retention(CLASS)
@Target({CONSTRUCTOR, METHOD, TYPE})
public @interface SuppressSignatureCheck {}
