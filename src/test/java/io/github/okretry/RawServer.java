package io.github.okretry;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A hostile HTTP/1.1 peer on loopback made of raw socket writes, for what no well-behaved server
 * would send: response headers trickled a byte at a time, a malformed status line. Connection
 * {@code n} (from 0) reads one request head and gets reply {@code n}; the last reply repeats.
 * Connections are served one after another; the server stops by itself after 20 s or on close.
 */
final class RawServer implements AutoCloseable {

  /** What one connection is answered with. */
  interface Reply {
    void write(OutputStream out) throws IOException, InterruptedException;
  }

  /** Writes {@code raw} (ISO-8859-1, so any char below 256 goes out as that byte) after a pause. */
  static Reply after(long millis, String raw) {
    return out -> {
      Thread.sleep(millis);
      out.write(raw.getBytes(StandardCharsets.ISO_8859_1));
      out.flush();
    };
  }

  /**
   * Starts a 200 response, then sends one more header byte every {@code intervalMillis}, forever.
   */
  static Reply trickle(long intervalMillis) {
    return out -> {
      out.write("HTTP/1.1 200 OK\r\nX-Slow: ".getBytes(StandardCharsets.US_ASCII));
      out.flush();
      while (true) {
        out.write('z');
        out.flush();
        Thread.sleep(intervalMillis);
      }
    };
  }

  private final ServerSocket serverSocket;
  private final List<Reply> replies;
  private final AtomicInteger connections = new AtomicInteger();
  private final Thread thread;

  RawServer(Reply... replies) throws IOException {
    this.replies = List.of(replies);
    serverSocket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    thread = new Thread(this::serve, "raw-server");
    thread.setDaemon(true);
    thread.start();
  }

  String url() {
    return "http://127.0.0.1:" + serverSocket.getLocalPort() + "/";
  }

  /** Connections accepted so far. */
  int connections() {
    return connections.get();
  }

  private void serve() {
    long end = System.nanoTime() + 20_000_000_000L;
    while (!serverSocket.isClosed() && System.nanoTime() < end) {
      try (Socket socket = serverSocket.accept()) {
        int n = connections.getAndIncrement();
        socket.setSoTimeout(20_000);
        InputStream in = socket.getInputStream();
        int matched = 0;
        while (matched < 4) { // read up to the blank line that ends the request head
          int b = in.read();
          if (b < 0) break;
          matched = (b == "\r\n\r\n".charAt(matched)) ? matched + 1 : (b == '\r' ? 1 : 0);
        }
        replies.get(Math.min(n, replies.size() - 1)).write(socket.getOutputStream());
      } catch (IOException | InterruptedException e) {
        // the client went away or we are closing: serve the next connection
      }
    }
  }

  @Override
  public void close() throws IOException {
    serverSocket.close();
    thread.interrupt();
  }
}
