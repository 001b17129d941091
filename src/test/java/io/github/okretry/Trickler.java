package io.github.okretry;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/**
 * A hostile HTTP server on loopback that answers every request by trickling its response headers
 * one byte every 100 ms: no single read ever times out, yet the response never ends. Stops by
 * itself after 20 s or on close.
 */
final class Trickler implements AutoCloseable {
  private final ServerSocket serverSocket;
  private final Thread thread;

  Trickler() throws IOException {
    serverSocket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    thread = new Thread(this::serve, "trickler");
    thread.setDaemon(true);
    thread.start();
  }

  String url() {
    return "http://127.0.0.1:" + serverSocket.getLocalPort() + "/";
  }

  private void serve() {
    long end = System.nanoTime() + 20_000_000_000L;
    while (!serverSocket.isClosed() && System.nanoTime() < end) {
      try (Socket socket = serverSocket.accept()) {
        InputStream in = socket.getInputStream();
        int matched = 0;
        while (matched < 4) { // read up to the blank line that ends the request head
          int b = in.read();
          if (b < 0) break;
          matched = (b == "\r\n\r\n".charAt(matched)) ? matched + 1 : (b == '\r' ? 1 : 0);
        }
        OutputStream out = socket.getOutputStream();
        out.write("HTTP/1.1 200 OK\r\nX-Slow: ".getBytes(StandardCharsets.US_ASCII));
        out.flush();
        while (!serverSocket.isClosed() && System.nanoTime() < end) {
          out.write('z');
          out.flush();
          Thread.sleep(100);
        }
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
