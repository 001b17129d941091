package io.github.okretry.internal;

import static java.lang.annotation.ElementType.CONSTRUCTOR;
import static java.lang.annotation.ElementType.METHOD;
import static java.lang.annotation.ElementType.TYPE;
import static java.lang.annotation.RetentionPolicy.CLASS;

import java.lang.annotation.Retention;
import java.lang.annotation.Target;

/**
 * Tells animal-sniffer not to check the annotated member against the Java 8 and Android API 21
 * signatures (configured in pom.xml), like OkHttp's {@code
 * okhttp3.internal.SuppressSignatureCheck}.
 *
 * <p>For a member that is only ever called where the newer API exists: a {@code Duration} overload
 * beside a {@code (long, TimeUnit)} one, which an Android caller below API 26 cannot call because
 * it has no {@code Duration} to pass. Class retention: animal-sniffer reads it from the bytecode;
 * nothing does at run time.
 */
@Retention(CLASS)
@Target({TYPE, METHOD, CONSTRUCTOR})
public @interface SuppressSignatureCheck {}
