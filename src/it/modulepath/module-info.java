/** A user's module: reads okretry, and through it okhttp3 (okretry requires it transitively). */
module okretry.modulepath {
  requires io.github.okretry;
}
