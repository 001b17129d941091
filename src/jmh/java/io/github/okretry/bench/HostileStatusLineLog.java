package io.github.okretry.bench;

import io.github.okretry.RetryInterceptor;
import io.github.okretry.RetryPolicy;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import okhttp3.OkHttpClient;
import okhttp3.Request;

/**
 * Issue 15.6: okretry's DEBUG lines for a peer whose status line carries ESC, a bare CR, a C1 CSI,
 * an RTL override, a NUL and 100 000 more characters. Run with {@code -Dokretry.logLevel=DEBUG}
 * (the test classpath's logback-test.xml); the lines go to stderr, where a byte-level check finds
 * no control character and no line longer than a few hundred characters.
 */
public final class HostileStatusLineLog {
  public static void main(String[] args) throws Exception {
    ServerSocket ss = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    String line =
        "HTTP/1.1 200\u001b[31m OK\rINFO forged: payment approved\u009b2J\u202Etxt.exe\u0000"
            + "A".repeat(100_000);
    Thread t =
        new Thread(
            () -> {
              while (true) {
                try (Socket s = ss.accept()) {
                  InputStream in = s.getInputStream();
                  int m = 0;
                  while (m < 4) {
                    int b = in.read();
                    if (b < 0) break;
                    m = (b == "\r\n\r\n".charAt(m)) ? m + 1 : (b == '\r' ? 1 : 0);
                  }
                  s.getOutputStream().write((line + "\r\n\r\n").getBytes(StandardCharsets.UTF_8));
                  s.getOutputStream().flush();
                } catch (IOException e) {
                  return;
                }
              }
            });
    t.setDaemon(true);
    t.start();
    RetryInterceptor retry =
        RetryInterceptor.create(
            RetryPolicy.builder().maxRetries(1).retryOnException(e -> true).build());
    OkHttpClient client = retry.install(new OkHttpClient.Builder()).build();
    try {
      client
          .newCall(new Request.Builder().url("http://127.0.0.1:" + ss.getLocalPort() + "/").build())
          .execute();
    } catch (IOException e) {
      System.out.println("caller got: " + e.getClass().getSimpleName());
    }
    client.dispatcher().executorService().shutdown();
  }
}
