package io.github.okretry.bench;

import java.io.BufferedInputStream;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A minimal keep-alive HTTP/1.1 server on loopback, one thread per connection, TCP_NODELAY on. It
 * answers every request with the same prebuilt response, or (stall mode) reads forever and never
 * answers. Unlike MockWebServer it records nothing, so a benchmark of millions of calls neither
 * grows the heap nor spends the shared CPU on bookkeeping.
 */
public final class TinyHttpServer implements Closeable {

  private static final byte[] OK =
      "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok"
          .getBytes(StandardCharsets.US_ASCII);

  private final ServerSocket serverSocket;
  private final boolean stall;
  private final byte[] response;
  private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
  private final AtomicLong requests = new AtomicLong();
  private final Thread acceptor;

  private TinyHttpServer(boolean stall, byte[] response) throws IOException {
    this.stall = stall;
    this.response = response;
    this.serverSocket = new ServerSocket();
    serverSocket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 128);
    this.acceptor = new Thread(this::acceptLoop, "tiny-http-accept");
    acceptor.setDaemon(true);
    acceptor.start();
  }

  /** A server answering {@code 200 ok} to everything. */
  public static TinyHttpServer ok() throws IOException {
    return new TinyHttpServer(false, OK);
  }

  /** A server answering every request with {@code rawResponse}: status line, headers, body. */
  public static TinyHttpServer answering(String rawResponse) throws IOException {
    return new TinyHttpServer(false, rawResponse.getBytes(StandardCharsets.US_ASCII));
  }

  /** A server that accepts connections and reads requests but never answers. */
  public static TinyHttpServer stalled() throws IOException {
    return new TinyHttpServer(true, null);
  }

  public String url(String path) {
    return "http://127.0.0.1:" + serverSocket.getLocalPort() + path;
  }

  public long requestCount() {
    return requests.get();
  }

  private void acceptLoop() {
    while (!serverSocket.isClosed()) {
      try {
        Socket socket = serverSocket.accept();
        socket.setTcpNoDelay(true);
        sockets.add(socket);
        Thread t = new Thread(() -> serve(socket), "tiny-http-conn");
        t.setDaemon(true);
        t.start();
      } catch (IOException e) {
        return; // closed
      }
    }
  }

  private void serve(Socket socket) {
    try (socket;
        InputStream in = new BufferedInputStream(socket.getInputStream(), 8192);
        OutputStream out = socket.getOutputStream()) {
      if (stall) {
        while (in.read() != -1) {} // hold the connection open, answer nothing
        return;
      }
      while (true) {
        long contentLength = readHead(in);
        if (contentLength < 0) return; // EOF
        for (long left = contentLength; left > 0; ) {
          long skipped = in.skip(left);
          if (skipped <= 0) {
            if (in.read() == -1) return;
            skipped = 1;
          }
          left -= skipped;
        }
        requests.incrementAndGet();
        out.write(response);
        out.flush();
      }
    } catch (SocketException e) {
      // the client went away
    } catch (IOException e) {
      // likewise
    } finally {
      sockets.remove(socket);
    }
  }

  /** Reads one request head; returns its Content-Length (0 if none), or -1 at end of stream. */
  private static long readHead(InputStream in) throws IOException {
    StringBuilder line = new StringBuilder(64);
    long contentLength = 0;
    boolean first = true;
    while (true) {
      int c = in.read();
      if (c == -1) return -1;
      if (c == '\n') {
        int len = line.length();
        if (len > 0 && line.charAt(len - 1) == '\r') line.setLength(len - 1);
        if (line.length() == 0) {
          if (first) continue; // tolerate a stray CRLF between requests
          return contentLength;
        }
        first = false;
        if (line.length() > 15 && line.substring(0, 15).equalsIgnoreCase("content-length:")) {
          contentLength = Long.parseLong(line.substring(15).trim());
        }
        line.setLength(0);
      } else {
        line.append((char) c);
      }
    }
  }

  @Override
  public void close() throws IOException {
    serverSocket.close();
    for (Socket s : sockets) {
      try {
        s.close();
      } catch (IOException ignored) {
        // closing anyway
      }
    }
  }
}
