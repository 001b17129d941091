package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.net.ServerSocket;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The packaged jar as a named module: a small program, itself a module, runs on the module path
 * (okretry's jar with its dependencies, nothing on the class path) through a refused connection, a
 * 503 that is retried, and a success. Run by failsafe after {@code package}: {@code mvn verify}.
 *
 * <p>On the class path every package is open to every class; on the module path okhttp3 exports its
 * internal packages only to OkHttp's own modules, so a reference from okretry to {@code
 * okhttp3.internal.*} fails here with IllegalAccessError and nowhere else.
 */
@Tag("integration")
class ModulePathIT {

  @Test
  void refusedConnectionRetryAndSuccessOnTheModulePath() throws Exception {
    Path jar = Paths.get(System.getProperty("okretry.jar"));
    Path program = Paths.get(System.getProperty("okretry.modulePathProgram"));
    Path work = Paths.get(System.getProperty("okretry.modulePathWorkDir"));
    assertThat(jar).exists();

    // okretry and its runtime dependencies (slf4j-nop as the application's SLF4J binding).
    String modulePath =
        Stream.of(
                jar,
                locationOf(okhttp3.OkHttpClient.class),
                locationOf(okio.Buffer.class),
                locationOf(kotlin.Unit.class),
                locationOf(org.slf4j.Logger.class),
                Paths.get(System.getProperty("okretry.slf4jBinding")),
                locationOf(org.jspecify.annotations.Nullable.class))
            .map(Path::toString)
            .collect(Collectors.joining(File.pathSeparator));

    Path classes = work.resolve("classes");
    List<String> javacArgs =
        new ArrayList<>(List.of("-d", classes.toString(), "--module-path", modulePath));
    try (Stream<Path> sources = Files.walk(program)) {
      sources.filter(p -> p.toString().endsWith(".java")).forEach(p -> javacArgs.add(p.toString()));
    }
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    assertThat(javac.run(null, null, null, javacArgs.toArray(new String[0])))
        .as("javac %s", javacArgs)
        .isZero();

    int refusedPort;
    try (ServerSocket socket = new ServerSocket(0)) {
      refusedPort = socket.getLocalPort(); // closed again: connections to it are refused
    }

    try (MockWebServer server = new MockWebServer()) {
      server.enqueue(new MockResponse.Builder().code(503).build());
      server.enqueue(new MockResponse.Builder().code(200).body("hello").build());
      server.start();

      Process process =
          new ProcessBuilder(
                  Paths.get(System.getProperty("java.home"), "bin", "java").toString(),
                  "--module-path",
                  classes + File.pathSeparator + modulePath,
                  "--module",
                  "okretry.modulepath/okretry.modulepath.Main",
                  String.valueOf(refusedPort),
                  server.url("/").toString())
              .redirectErrorStream(true)
              .start();
      process.getOutputStream().close();
      boolean exited = process.waitFor(60, TimeUnit.SECONDS);
      if (!exited) process.destroyForcibly();
      String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);

      assertThat(exited).as(output).isTrue();
      assertThat(process.exitValue()).as(output).isZero();
      assertThat(output)
          .contains("refused: java.net.ConnectException after 2 attempts")
          .contains("server: 200 hello after 2 attempts");
      assertThat(server.getRequestCount()).isEqualTo(2);
    }
  }

  private static Path locationOf(Class<?> type) throws URISyntaxException {
    return Paths.get(type.getProtectionDomain().getCodeSource().getLocation().toURI());
  }
}
