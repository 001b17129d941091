/**
 * okretry: retries for OkHttp. Only {@code io.github.okretry} is API; {@code
 * io.github.okretry.internal} stays inside the module.
 *
 * <p>Compiled for Java 9 into {@code META-INF/versions/9} of the multi-release jar, so Java 8 and
 * Android never see it.
 */
module io.github.okretry {
  // okhttp3 types (Interceptor, OkHttpClient, Call, Request, Response) are in okretry's API, so a
  // module that reads okretry reads okhttp3 too.
  requires transitive okhttp3;
  requires okio;
  requires kotlin.stdlib;
  requires org.slf4j;
  // Nullness annotations: read by compilers, not needed at run time.
  requires static org.jspecify;

  exports io.github.okretry;
}
