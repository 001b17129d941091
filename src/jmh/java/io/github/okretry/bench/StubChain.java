package io.github.okretry.bench;

import java.net.Proxy;
import java.net.ProxySelector;
import java.util.concurrent.TimeUnit;
import javax.net.SocketFactory;
import javax.net.ssl.HostnameVerifier;
import javax.net.ssl.SSLSocketFactory;
import javax.net.ssl.X509TrustManager;
import kotlin.jvm.functions.Function0;
import kotlin.reflect.KClass;
import okhttp3.Authenticator;
import okhttp3.Cache;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.CertificatePinner;
import okhttp3.Connection;
import okhttp3.ConnectionPool;
import okhttp3.CookieJar;
import okhttp3.Dns;
import okhttp3.EventListener;
import okhttp3.Interceptor;
import okhttp3.Request;
import okhttp3.Response;
import okio.Timeout;

/**
 * An {@link Interceptor.Chain} that answers every {@code proceed} with one prebuilt response, so a
 * benchmark measures only the interceptor. Every {@code with…} returns this same chain: the
 * benchmark's interceptor is configured so it does not need real copies.
 */
final class StubChain implements Interceptor.Chain {

  private final Request request;
  private final Response[] responses;
  private final StubCall call;
  private int next;

  /** Answers each {@code proceed} with the next of {@code responses}, round and round. */
  StubChain(Request request, Response... responses) {
    this.request = request;
    this.responses = responses;
    this.call = new StubCall(request);
  }

  @Override
  public Request request() {
    return request;
  }

  @Override
  public Response proceed(Request request) {
    Response r = responses[next];
    next = (next + 1) % responses.length;
    return r;
  }

  @Override
  public Connection connection() {
    return null;
  }

  @Override
  public Call call() {
    return call;
  }

  @Override
  public int connectTimeoutMillis() {
    return 10_000;
  }

  @Override
  public Interceptor.Chain withConnectTimeout(int timeout, TimeUnit unit) {
    return this;
  }

  @Override
  public int readTimeoutMillis() {
    return 10_000;
  }

  @Override
  public Interceptor.Chain withReadTimeout(int timeout, TimeUnit unit) {
    return this;
  }

  @Override
  public int writeTimeoutMillis() {
    return 10_000;
  }

  @Override
  public Interceptor.Chain withWriteTimeout(int timeout, TimeUnit unit) {
    return this;
  }

  @Override
  public boolean getFollowSslRedirects() {
    return true;
  }

  @Override
  public boolean getFollowRedirects() {
    return true;
  }

  @Override
  public Dns getDns() {
    return Dns.SYSTEM;
  }

  @Override
  public Interceptor.Chain withDns(Dns dns) {
    return this;
  }

  @Override
  public SocketFactory getSocketFactory() {
    return SocketFactory.getDefault();
  }

  @Override
  public Interceptor.Chain withSocketFactory(SocketFactory f) {
    return this;
  }

  @Override
  public boolean getRetryOnConnectionFailure() {
    return true;
  }

  @Override
  public Interceptor.Chain withRetryOnConnectionFailure(boolean retry) {
    return this;
  }

  @Override
  public Authenticator getAuthenticator() {
    return Authenticator.NONE;
  }

  @Override
  public Interceptor.Chain withAuthenticator(Authenticator a) {
    return this;
  }

  @Override
  public CookieJar getCookieJar() {
    return CookieJar.NO_COOKIES;
  }

  @Override
  public Interceptor.Chain withCookieJar(CookieJar c) {
    return this;
  }

  @Override
  public Cache getCache() {
    return null;
  }

  @Override
  public Interceptor.Chain withCache(Cache c) {
    return this;
  }

  @Override
  public Proxy getProxy() {
    return null;
  }

  @Override
  public Interceptor.Chain withProxy(Proxy p) {
    return this;
  }

  @Override
  public ProxySelector getProxySelector() {
    return ProxySelector.getDefault();
  }

  @Override
  public Interceptor.Chain withProxySelector(ProxySelector p) {
    return this;
  }

  @Override
  public Authenticator getProxyAuthenticator() {
    return Authenticator.NONE;
  }

  @Override
  public Interceptor.Chain withProxyAuthenticator(Authenticator a) {
    return this;
  }

  @Override
  public SSLSocketFactory getSslSocketFactoryOrNull() {
    return null;
  }

  @Override
  public Interceptor.Chain withSslSocketFactory(SSLSocketFactory f, X509TrustManager t) {
    return this;
  }

  @Override
  public X509TrustManager getX509TrustManagerOrNull() {
    return null;
  }

  @Override
  public HostnameVerifier getHostnameVerifier() {
    return null;
  }

  @Override
  public Interceptor.Chain withHostnameVerifier(HostnameVerifier v) {
    return this;
  }

  @Override
  public CertificatePinner getCertificatePinner() {
    return CertificatePinner.DEFAULT;
  }

  @Override
  public Interceptor.Chain withCertificatePinner(CertificatePinner p) {
    return this;
  }

  @Override
  public ConnectionPool getConnectionPool() {
    return null;
  }

  @Override
  public Interceptor.Chain withConnectionPool(ConnectionPool p) {
    return this;
  }

  @Override
  public EventListener getEventListener() {
    return EventListener.NONE;
  }

  /** A call that is never canceled, has no timeout, and ignores listeners. */
  static final class StubCall implements Call {
    private final Request request;
    private final Timeout timeout = new Timeout();

    StubCall(Request request) {
      this.request = request;
    }

    @Override
    public Request request() {
      return request;
    }

    @Override
    public Response execute() {
      throw new UnsupportedOperationException();
    }

    @Override
    public void enqueue(Callback callback) {
      throw new UnsupportedOperationException();
    }

    @Override
    public void cancel() {}

    @Override
    public boolean isExecuted() {
      return true;
    }

    @Override
    public boolean isCanceled() {
      return false;
    }

    @Override
    public Timeout timeout() {
      return timeout;
    }

    @Override
    public void addEventListener(EventListener listener) {}

    @Override
    public <T> T tag(KClass<T> type) {
      return null;
    }

    @Override
    public <T> T tag(Class<? extends T> type) {
      return null;
    }

    @Override
    public <T> T tag(KClass<T> type, Function0<? extends T> computeIfAbsent) {
      return computeIfAbsent.invoke();
    }

    @Override
    public <T> T tag(Class<T> type, Function0<? extends T> computeIfAbsent) {
      return computeIfAbsent.invoke();
    }

    @Override
    public Call clone() {
      return new StubCall(request);
    }
  }
}
