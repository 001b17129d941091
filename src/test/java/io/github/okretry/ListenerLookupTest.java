package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import net.bytebuddy.ByteBuddy;
import net.bytebuddy.description.modifier.SyntheticState;
import net.bytebuddy.description.modifier.Visibility;
import net.bytebuddy.implementation.StubMethod;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The one reflective look okretry makes ({@link Events}: does the listener override {@code
 * onNetworkRequest}?) and what happens where a platform makes it fail: a shrinker that renamed the
 * method, a listener class with a public method naming an absent class (a {@code LinkageError}),
 * GraalVM's {@code MissingReflectionRegistrationError} (an {@code Error}) in a native image. Each
 * falls back to watching network requests, so every event still arrives; only the VM's own failures
 * pass through.
 */
@Tag("integration")
@ExtendWith(LeakCheck.class)
class ListenerLookupTest {

  /** Records network requests: it overrides onNetworkRequest. */
  static final class Hearing implements RetryListener {
    final List<String> network = new CopyOnWriteArrayList<>();

    @Override
    public void onNetworkRequest(Request request, int attempt, int requestInAttempt) {
      network.add(attempt + "." + requestInAttempt);
    }
  }

  /** Overrides another method only. */
  static final class NotHearing implements RetryListener {
    @Override
    public void onAttemptStarted(Request request, int attempt) {}
  }

  /** Overrides onNetworkRequest, for {@link HearingSubclass} to inherit. */
  static class HearingBase implements RetryListener {
    @Override
    public void onNetworkRequest(Request request, int attempt, int requestInAttempt) {}
  }

  static final class HearingSubclass extends HearingBase {}

  /**
   * A stand-in for GraalVM's {@code org.graalvm.nativeimage.MissingReflectionRegistrationError}.
   */
  static final class MissingReflectionRegistrationError extends Error {
    MissingReflectionRegistrationError(String message) {
      super(message);
    }
  }

  @Test
  void theReflectiveLookTellsAnOverrideFromTheDefault() {
    assertThat(overrides(new Hearing())).isTrue();
    assertThat(overrides(new HearingSubclass())).isTrue();
    assertThat(overrides(new NotHearing())).isFalse();
    assertThat(overrides(new RetryListener() {})).isFalse();
    assertThat(overrides(RetryListener.NONE)).isFalse();
  }

  /** What the look says (watching also follows the DEBUG log, which a test run may turn on). */
  static boolean overrides(RetryListener listener) {
    return Events.overridesOnNetworkRequest(listener, Events.REFLECTION);
  }

  /**
   * Below Android API 24, D8 and R8 desugar RetryListener's default methods: the bodies move to a
   * companion class, and a listener class that inherits one gets a synthetic public method
   * forwarding there (seen in D8 8.5.35's output, flags ACC_PUBLIC | ACC_SYNTHETIC). Made here with
   * Byte Buddy (it comes with AssertJ): such a method is not the app's override.
   */
  @Test
  void aSyntheticForwarderFromDesugaringIsNotAnOverride() throws Exception {
    Class<? extends RetryListener> desugared =
        new ByteBuddy()
            .subclass(Object.class)
            .implement(RetryListener.class)
            .defineMethod(
                "onNetworkRequest", void.class, Visibility.PUBLIC, SyntheticState.SYNTHETIC)
            .withParameters(Request.class, int.class, int.class)
            .intercept(StubMethod.INSTANCE)
            .make()
            .load(ListenerLookupTest.class.getClassLoader())
            .getLoaded()
            .asSubclass(RetryListener.class);
    RetryListener listener = desugared.getConstructor().newInstance();
    assertThat(
            listener
                .getClass()
                .getMethod("onNetworkRequest", Request.class, int.class, int.class)
                .isSynthetic())
        .as("the premise: the class declares a synthetic onNetworkRequest")
        .isTrue();
    assertThat(overrides(listener)).isFalse();
  }

  static Stream<Arguments> failedLooks() {
    return Stream.of(
        Arguments.of(
            "a shrinker renamed the method", new NoSuchMethodException("onNetworkRequest")),
        Arguments.of("a security manager refused", new SecurityException("denied")),
        Arguments.of("a class in a signature is absent", new NoClassDefFoundError("com/example/X")),
        Arguments.of(
            "a native image without reflection metadata",
            new MissingReflectionRegistrationError("onNetworkRequest(Request, int, int)")));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("failedLooks")
  void aLookThatFailsWatchesNetworkRequests(String platform, Throwable failure) {
    Events.MethodLookup failing =
        listenerClass -> {
          if (failure instanceof NoSuchMethodException) throw (NoSuchMethodException) failure;
          if (failure instanceof RuntimeException) throw (RuntimeException) failure;
          throw (Error) failure;
        };
    // A listener that does not override it: watching is the safe side, never a lost event.
    assertThat(Events.overridesOnNetworkRequest(new NotHearing(), failing)).isTrue();
    assertThat(new Events(new NotHearing(), failing).watchesNetworkRequests()).isTrue();
  }

  @Test
  void theVmsOwnFailuresPassThrough() {
    OutOfMemoryError oom = new OutOfMemoryError("test");
    assertThatThrownBy(
            () ->
                Events.overridesOnNetworkRequest(
                    new Hearing(),
                    listenerClass -> {
                      throw oom;
                    }))
        .isSameAs(oom);
  }

  /**
   * A real failing look on this JVM: the listener's class has a public method naming a class its
   * class loader cannot find, so {@code getMethod} throws {@code NoClassDefFoundError} (reflection
   * resolves every public method's types). On 34cc5b2 that escaped {@code build()}. Now the policy
   * builds, and both drivers deliver every network request to the listener.
   */
  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"interceptor", "factory enqueue"})
  void aListenerWhoseClassCannotBeFullyResolvedStillHearsEveryNetworkRequest(String driver)
      throws Exception {
    List<String> network = new CopyOnWriteArrayList<>();
    RetryListener listener =
        (RetryListener)
            new WithoutAbsent()
                .loadClass(ListenerNamingAnAbsentClass.class.getName())
                .getConstructor(List.class)
                .newInstance(network);
    assertThatThrownBy(
            () ->
                listener
                    .getClass()
                    .getMethod("onNetworkRequest", Request.class, int.class, int.class))
        .as("the premise: reflection on this class fails")
        .isInstanceOf(NoClassDefFoundError.class);

    RetryPolicy policy =
        RetryPolicy.builder()
            .listener(listener)
            .baseDelay(1, TimeUnit.MILLISECONDS)
            .jitter(Jitter.NONE)
            .build();
    assertThat(policy.events.watchesNetworkRequests()).isTrue();

    try (MockWebServer server = new MockWebServer()) {
      server.start();
      server.enqueue(new MockResponse.Builder().code(503).build());
      server.enqueue(new MockResponse.Builder().body("ok").build());
      Request request = new Request.Builder().url(server.url("/")).build();
      OkHttpClient client;
      String body;
      if (driver.equals("interceptor")) {
        client =
            LeakCheck.track(
                RetryInterceptor.create(policy).install(new OkHttpClient.Builder()).build());
        try (Response r = client.newCall(request).execute()) {
          body = r.body().string();
        }
      } else {
        client = LeakCheck.track(new OkHttpClient());
        try (RetryingCallFactory factory = RetryingCallFactory.create(client, policy)) {
          body = enqueue(factory.newCall(request));
        }
      }
      assertThat(body).isEqualTo("ok");
      assertThat(server.getRequestCount()).isEqualTo(2);
      assertThat(network).containsExactly("1.1", "2.1");
      client.dispatcher().executorService().shutdown();
      client.connectionPool().evictAll();
    }
  }

  private static String enqueue(Call call) throws Exception {
    CompletableFuture<String> body = new CompletableFuture<>();
    call.enqueue(
        new Callback() {
          @Override
          public void onResponse(Call c, Response response) {
            try (Response r = response) {
              body.complete(r.body().string());
            } catch (IOException e) {
              body.completeExceptionally(e);
            }
          }

          @Override
          public void onFailure(Call c, IOException e) {
            body.completeExceptionally(e);
          }
        });
    return body.get(10, TimeUnit.SECONDS);
  }

  /** Not there at run time for {@link ListenerNamingAnAbsentClass} ({@link WithoutAbsent}). */
  public static final class Absent {}

  /** Hears network requests; also has a public method whose parameter type will be absent. */
  public static final class ListenerNamingAnAbsentClass implements RetryListener {
    private final List<String> network;

    public ListenerNamingAnAbsentClass(List<String> network) {
      this.network = network;
    }

    @Override
    public void onNetworkRequest(Request request, int attempt, int requestInAttempt) {
      network.add(attempt + "." + requestInAttempt);
    }

    /** Never called: only its signature matters, which names {@link Absent}. */
    public void use(Absent absent) {}
  }

  /**
   * Loads {@link ListenerNamingAnAbsentClass} itself and cannot find {@link Absent}, as where an
   * optional dependency is left out; everything else (okretry, OkHttp) comes from the test's
   * loader, so the listener is a {@link RetryListener} here.
   */
  static final class WithoutAbsent extends ClassLoader {
    WithoutAbsent() {
      super(ListenerLookupTest.class.getClassLoader());
    }

    @Override
    protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
      synchronized (getClassLoadingLock(name)) {
        if (name.equals(Absent.class.getName())) throw new ClassNotFoundException(name);
        if (!name.equals(ListenerNamingAnAbsentClass.class.getName())) {
          return super.loadClass(name, resolve);
        }
        Class<?> loaded = findLoadedClass(name);
        if (loaded != null) return loaded;
        try (InputStream in = getParent().getResourceAsStream(name.replace('.', '/') + ".class")) {
          if (in == null) throw new ClassNotFoundException(name);
          byte[] bytes = in.readAllBytes();
          return defineClass(name, bytes, 0, bytes.length);
        } catch (IOException e) {
          throw new ClassNotFoundException(name, e);
        }
      }
    }
  }
}
