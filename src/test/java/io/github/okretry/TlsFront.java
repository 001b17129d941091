package io.github.okretry;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import mockwebserver3.MockWebServer;
import okhttp3.HttpUrl;

/**
 * A loopback TCP front for a TLS {@link MockWebServer}, standing for an overloaded TLS terminator
 * or a draining load balancer: connection {@code n} (from 0) is handled by {@code acts[n]}, and
 * every later one is forwarded to the server byte for byte. It never decrypts anything.
 */
final class TlsFront implements AutoCloseable {

  /** What the front does with one connection. */
  enum Act {
    /** Reads the client's first TLS record (the ClientHello), then closes the connection. */
    CLOSE_AFTER_HELLO,
    /** Reads the ClientHello, then resets the connection (SO_LINGER 0: an RST, not a FIN). */
    RESET_AFTER_HELLO,
    /**
     * Forwards both ways until the server has received one more request, then closes both sides:
     * the request was processed, its response (hold it back with a headers delay) never arrives.
     */
    CLOSE_AWAITING_RESPONSE,
    /** Forwards both ways. */
    FORWARD
  }

  private final MockWebServer upstream;
  private final List<Act> acts;
  private final ServerSocket serverSocket;
  private final AtomicInteger connections = new AtomicInteger();
  private final List<Socket> sockets = new ArrayList<>();
  private final List<Thread> threads = new ArrayList<>();
  private boolean closed; // guarded by this

  TlsFront(MockWebServer upstream, Act... firstConnections) throws IOException {
    this.upstream = upstream;
    this.acts = List.of(firstConnections);
    serverSocket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    start("tls-front-accept", this::accept);
  }

  /** {@code path} on the front, by IP address so that OkHttp has one route only. */
  HttpUrl url(String path) {
    return new HttpUrl.Builder()
        .scheme("https")
        .host("127.0.0.1")
        .port(serverSocket.getLocalPort())
        .encodedPath(path)
        .build();
  }

  /** Connections accepted so far. */
  int connections() {
    return connections.get();
  }

  private void accept() {
    while (!serverSocket.isClosed()) {
      try {
        Socket client = track(serverSocket.accept());
        int n = connections.getAndIncrement();
        Act act = n < acts.size() ? acts.get(n) : Act.FORWARD;
        start("tls-front-" + n, () -> handle(client, act));
      } catch (IOException e) {
        return; // closed
      }
    }
  }

  private void handle(Socket client, Act act) {
    try {
      if (act == Act.CLOSE_AFTER_HELLO || act == Act.RESET_AFTER_HELLO) {
        readRecord(client.getInputStream());
        if (act == Act.RESET_AFTER_HELLO) client.setSoLinger(true, 0);
        client.close();
        return;
      }
      int requestsBefore = upstream.getRequestCount();
      Socket server =
          track(new Socket(upstream.getSocketAddress().getAddress(), upstream.getPort()));
      start("tls-front-up", () -> pump(client, server));
      start("tls-front-down", () -> pump(server, client));
      if (act == Act.CLOSE_AWAITING_RESPONSE) {
        long end = System.nanoTime() + 10_000_000_000L;
        while (upstream.getRequestCount() == requestsBefore && System.nanoTime() < end) {
          Thread.sleep(2);
        }
        client.close();
        server.close();
      }
    } catch (IOException | InterruptedException e) {
      closeQuietly(client); // the client went away or the front is closing
    }
  }

  /** Reads one TLS record: a 5-byte header whose last two bytes are the length, then the body. */
  private static void readRecord(InputStream in) throws IOException {
    DataInputStream data = new DataInputStream(in);
    byte[] header = new byte[5];
    data.readFully(header);
    data.readFully(new byte[((header[3] & 0xff) << 8) | (header[4] & 0xff)]);
  }

  private static void pump(Socket from, Socket to) {
    byte[] buffer = new byte[8192];
    try {
      InputStream in = from.getInputStream();
      OutputStream out = to.getOutputStream();
      for (int n; (n = in.read(buffer)) != -1; ) {
        out.write(buffer, 0, n);
        out.flush();
      }
    } catch (IOException e) {
      // one side closed: close both below
    }
    closeQuietly(from);
    closeQuietly(to);
  }

  private synchronized Socket track(Socket socket) {
    if (closed) closeQuietly(socket);
    sockets.add(socket);
    return socket;
  }

  private synchronized void start(String name, Runnable body) {
    Thread thread = new Thread(body, name);
    thread.setDaemon(true);
    threads.add(thread);
    thread.start();
  }

  private static void closeQuietly(Socket socket) {
    try {
      socket.close();
    } catch (IOException ignored) {
      // closing anyway
    }
  }

  /** Closes every connection and waits for the front's threads to end. */
  @Override
  public void close() throws IOException, InterruptedException {
    serverSocket.close();
    List<Thread> toJoin;
    synchronized (this) {
      closed = true;
      sockets.forEach(TlsFront::closeQuietly);
      toJoin = new ArrayList<>(threads);
    }
    for (Thread thread : toJoin) thread.join(5_000);
  }
}
