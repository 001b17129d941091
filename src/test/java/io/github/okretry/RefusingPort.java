package io.github.okretry;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;

/**
 * A loopback port that refuses connections for as long as this is open: a socket bound to it that
 * does not listen. Closing a {@code ServerSocket(0)} and using its port would do the same until
 * another test, in this JVM or in the other test JVM beside it, happened to listen on that port;
 * this one holds it.
 */
final class RefusingPort implements AutoCloseable {

  private final Socket socket = new Socket();

  RefusingPort() throws IOException {
    socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
  }

  /** The port: a connection to it on 127.0.0.1 is refused at once. */
  int port() {
    return socket.getLocalPort();
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }
}
