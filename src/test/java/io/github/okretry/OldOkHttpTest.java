package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.lang.reflect.InvocationTargetException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * okretry beside an OkHttp older than it supports, as when Retrofit 3 brings okhttp 4.12.0 to a
 * Maven build: {@code build()} fails with a message naming both versions, not a NoSuchMethodError
 * on the first retry. Each case loads okretry's classes, that OkHttp jar (copied to
 * target/okhttp-versions by the build) and the same okio, Kotlin and SLF4J as the tests in a class
 * loader of their own.
 */
@Tag("unit")
class OldOkHttpTest {

  static final Path VERSIONS =
      Paths.get(System.getProperty("okretry.okhttpVersionsDir", "target/okhttp-versions"));

  @ParameterizedTest(name = "{0}")
  @CsvSource({"okhttp-4.12.0.jar, 4.12.0", "okhttp-jvm-5.3.2.jar, 5.3.2"})
  void buildFailsNamingBothVersions(String jar, String version) throws Exception {
    try (URLClassLoader loader = beside(jar)) {
      assertThat(okHttpVersionSeenBy(loader)).isEqualTo(version);

      Throwable thrown = catchThrowable(() -> buildInterceptor(loader));

      assertThat(thrown)
          .isInstanceOf(IllegalStateException.class)
          .hasMessageStartingWith(
              "okretry needs OkHttp 5.4.0 or newer, but found OkHttp "
                  + version
                  + " on the classpath.");
    }
  }

  @Test
  void buildSucceedsOnTheOldestSupported() throws Throwable {
    try (URLClassLoader loader = beside("okhttp-jvm-5.4.0.jar")) {
      assertThat(okHttpVersionSeenBy(loader)).isEqualTo("5.4.0");
      assertThat(buildInterceptor(loader).getClass().getName())
          .isEqualTo(RetryInterceptor.class.getName());
    }
  }

  /** RetryInterceptor.create(RetryPolicy.builder().build()) with the classes of {@code loader}. */
  private static Object buildInterceptor(ClassLoader loader) throws Throwable {
    Class<?> interceptor = Class.forName(RetryInterceptor.class.getName(), true, loader);
    Class<?> policy = Class.forName(RetryPolicy.class.getName(), true, loader);
    try {
      Object builder = policy.getMethod("builder").invoke(null);
      Object built = builder.getClass().getMethod("build").invoke(builder);
      return interceptor.getMethod("create", policy).invoke(null, built);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }

  private static String okHttpVersionSeenBy(ClassLoader loader) throws Exception {
    return (String) Class.forName("okhttp3.OkHttp", true, loader).getField("VERSION").get(null);
  }

  private static URLClassLoader beside(String okHttpJar) throws Exception {
    Path jar = VERSIONS.resolve(okHttpJar);
    assertThat(jar).as("copied by the okhttp-versions execution in pom.xml").exists();
    URL[] urls = {
      locationOf(RetryInterceptor.class),
      jar.toUri().toURL(),
      locationOf(okio.Buffer.class),
      locationOf(kotlin.Unit.class),
      locationOf(org.slf4j.Logger.class),
      Paths.get(System.getProperty("okretry.slf4jBinding")).toUri().toURL(),
    };
    // Parent: the JDK only, so OkHttp and okretry come from these URLs and nowhere else.
    return new URLClassLoader(urls, ClassLoader.getPlatformClassLoader());
  }

  private static URL locationOf(Class<?> type) {
    URL location = type.getProtectionDomain().getCodeSource().getLocation();
    assertThat(Files.exists(Paths.get(toUri(location)))).isTrue();
    return location;
  }

  private static java.net.URI toUri(URL url) {
    try {
      return url.toURI();
    } catch (java.net.URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }
}
