package io.github.okretry;

import java.io.IOException;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A real HAProxy in front of loopback backends, as an L4 balancer (issue 44): {@code mode tcp},
 * {@code balance roundrobin}, no health checks, on a free loopback port, in the foreground ({@code
 * -db}) from a config generated in a temporary directory, which {@link #close()} stops and deletes.
 * The first connection goes to the first backend given (HAProxy's round robin starts at the first
 * server of equal weight). {@code bench/haproxy.sh} starts the same configuration by hand.
 *
 * <p>Needs the {@code haproxy} binary ({@link #BINARY}, or {@code -Dokretry.haproxy=PATH}; Debian:
 * {@code apt-get install -y haproxy}, measured with 2.6.12); tests check {@link #available()}.
 */
final class HaProxy implements AutoCloseable {
  /** Debian's path, which a non-root PATH leaves out. */
  static final String BINARY = System.getProperty("okretry.haproxy", "/usr/sbin/haproxy");

  private final Process process;
  private final Path dir;
  private final int port;

  private HaProxy(Process process, Path dir, int port) {
    this.process = process;
    this.dir = dir;
    this.port = port;
  }

  /** True if the HAProxy binary is there to run. */
  static boolean available() {
    return Files.isExecutable(Paths.get(BINARY));
  }

  /** The configuration: one TCP frontend on {@code port}, round robin over {@code backendPorts}. */
  static String config(int port, int... backendPorts) {
    StringBuilder servers = new StringBuilder();
    for (int i = 0; i < backendPorts.length; i++) {
      servers.append(String.format("  server b%d 127.0.0.1:%d%n", i, backendPorts[i]));
    }
    return String.join(
            "\n",
            "global",
            "  maxconn 1024",
            "defaults",
            "  mode tcp",
            "  timeout connect 2s",
            "  timeout client 60s",
            "  timeout server 60s",
            "frontend front",
            "  bind 127.0.0.1:" + port,
            "  default_backend replicas",
            "backend replicas",
            "  balance roundrobin",
            "")
        + servers;
  }

  /**
   * Starts HAProxy over the loopback backends at {@code backendPorts}, in this round-robin order,
   * and returns once it accepts connections.
   */
  static HaProxy start(int... backendPorts) throws IOException, InterruptedException {
    IOException last = null;
    for (int tries = 0; tries < 3; tries++) { // a free port may be taken before HAProxy binds it
      Path dir = Files.createTempDirectory("okretry-haproxy");
      int port = freePort();
      Path cfg = dir.resolve("haproxy.cfg");
      Files.write(cfg, config(port, backendPorts).getBytes(StandardCharsets.UTF_8));
      Process process =
          new ProcessBuilder(BINARY, "-db", "-f", cfg.toString())
              .redirectErrorStream(true)
              .redirectOutput(dir.resolve("haproxy.log").toFile())
              .start();
      HaProxy haProxy = new HaProxy(process, dir, port);
      try {
        haProxy.awaitListening();
        return haProxy;
      } catch (IOException e) {
        last = e;
        haProxy.close();
      }
    }
    throw last;
  }

  int port() {
    return port;
  }

  private void awaitListening() throws IOException, InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        throw new IOException(
            "haproxy exited with "
                + process.exitValue()
                + ": "
                + Files.readString(dir.resolve("haproxy.log")));
      }
      // Not a connection to the frontend: it would take the round robin's first turn.
      if (bound(port)) return;
      Thread.sleep(20);
    }
    throw new IOException("haproxy not listening on " + port + " after 5 s");
  }

  /** True if something listens on loopback {@code port}: it cannot be bound again. */
  private static boolean bound(int port) throws IOException {
    try (ServerSocket s = new ServerSocket()) {
      s.setReuseAddress(false);
      s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1);
      return false;
    } catch (BindException e) {
      return true;
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  @Override
  public void close() throws IOException {
    process.destroy();
    try {
      if (!process.waitFor(5, TimeUnit.SECONDS)) process.destroyForcibly().waitFor();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    try (Stream<Path> files = Files.walk(dir)) {
      for (Path p : (Iterable<Path>) files.sorted(Comparator.reverseOrder())::iterator) {
        Files.deleteIfExists(p);
      }
    }
  }
}
