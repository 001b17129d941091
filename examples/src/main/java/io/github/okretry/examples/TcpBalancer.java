package io.github.okretry.examples;

import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;

/**
 * A round-robin L4 (TCP) balancer on loopback, in process: what HAProxy does in {@code mode tcp}
 * with {@code balance roundrobin} and no health checks. Each accepted connection is piped, bytes as
 * they come, to the next backend in turn, the first connection to the first backend; the requests
 * on a connection are not balanced, only the connection. When either side of a pair closes (or
 * fails), both are closed; a backend that fails with an error (a reset) has the client's side reset
 * too. {@link #close()} stops accepting and closes every pair.
 *
 * <p>Scaffolding for {@code SickReplicaExample} and okretry's L4 balancer tests (issue 44), with
 * two threads per connection: fine for a few hundred connections on loopback, not a proxy to run.
 */
public final class TcpBalancer implements Closeable {
  private final ServerSocket serverSocket;
  private final List<InetSocketAddress> backends;
  private final AtomicInteger next = new AtomicInteger();
  private final AtomicIntegerArray accepted;
  private final Set<Socket> open = ConcurrentHashMap.newKeySet();
  private final ExecutorService threads;
  private volatile boolean closed;

  private TcpBalancer(List<InetSocketAddress> backends) throws IOException {
    if (backends.isEmpty()) throw new IllegalArgumentException("no backends");
    this.backends = List.copyOf(backends);
    this.accepted = new AtomicIntegerArray(backends.size());
    AtomicInteger threadCount = new AtomicInteger();
    this.threads =
        Executors.newCachedThreadPool(
            r -> {
              Thread t = new Thread(r, "tcp-balancer-" + threadCount.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
    this.serverSocket = new ServerSocket(0, 128, InetAddress.getLoopbackAddress());
    threads.execute(this::acceptLoop);
  }

  /**
   * Starts a balancer on a free loopback port over the backends on loopback at {@code ports}, in
   * this round-robin order: the first connection goes to {@code ports[0]}.
   */
  public static TcpBalancer start(int... ports) throws IOException {
    InetSocketAddress[] backends = new InetSocketAddress[ports.length];
    for (int i = 0; i < ports.length; i++) {
      backends[i] = new InetSocketAddress(InetAddress.getLoopbackAddress(), ports[i]);
    }
    return new TcpBalancer(List.of(backends));
  }

  /** The loopback port clients connect to. */
  public int port() {
    return serverSocket.getLocalPort();
  }

  /** Connections accepted so far and sent to backend {@code index} (in the order given). */
  public int connections(int index) {
    return accepted.get(index);
  }

  private void acceptLoop() {
    while (!serverSocket.isClosed()) {
      Socket client;
      try {
        client = serverSocket.accept();
      } catch (IOException e) {
        return; // closed
      }
      int index = Math.floorMod(next.getAndIncrement(), backends.size());
      accepted.incrementAndGet(index);
      threads.execute(() -> connect(client, backends.get(index)));
    }
  }

  private void connect(Socket client, InetSocketAddress backend) {
    open.add(client);
    Socket server = new Socket();
    open.add(server);
    if (closed) { // close() may have gone over the open sockets before these two were added
      closePair(client, server, false);
      return;
    }
    try {
      client.setTcpNoDelay(true);
      server.setTcpNoDelay(true);
      server.connect(backend, 5_000);
    } catch (IOException e) {
      // No health checks, as HAProxy without "check": a dead backend is a refused connection.
      closePair(client, server, true);
      return;
    }
    threads.execute(() -> pipe(client, server, false));
    pipe(server, client, true);
  }

  /** Copies {@code from} to {@code to} until either ends, then closes both. */
  private void pipe(Socket from, Socket to, boolean fromBackend) {
    boolean reset = false;
    byte[] buffer = new byte[16 * 1024];
    try (InputStream in = from.getInputStream();
        OutputStream out = to.getOutputStream()) {
      for (int n; (n = in.read(buffer)) != -1; ) {
        out.write(buffer, 0, n);
        out.flush();
      }
    } catch (IOException e) {
      // A backend's reset is passed on as a reset; the pair's other pipe closing is not one.
      reset = fromBackend && !from.isClosed();
    }
    closePair(from, to, reset);
  }

  private void closePair(Socket a, Socket b, boolean reset) {
    for (Socket s : new Socket[] {a, b}) {
      try {
        if (reset && s.isConnected() && !s.isClosed()) s.setSoLinger(true, 0);
        s.close();
      } catch (SocketException ignored) {
        // already closed
      } catch (IOException ignored) {
        // nothing more to do for a socket that would not close
      }
      open.remove(s);
    }
  }

  /** Stops accepting, closes every connection, and waits up to a second for its threads. */
  @Override
  public void close() throws IOException {
    closed = true;
    serverSocket.close();
    for (Socket s : open) {
      try {
        s.close();
      } catch (IOException ignored) {
        // closing anyway
      }
    }
    threads.shutdown();
    try {
      threads.awaitTermination(1, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
