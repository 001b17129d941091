#!/usr/bin/env bash
# Issue 14.3: keyless POSTs over cleartext HTTP/2 to a real nginx that is reloaded every 250 ms
# (each reload makes the old worker send GOAWAY). Runs GoawayPosts once per mode and reports, for
# every failed call, whether nginx ever received it (from its access log).
#
# Usage: bench/goaway.sh [runs=1] [calls=3000] [threads=8] [modes=bare,okretry-key,okretry-none]
#   PREFIX (default /tmp/okretry-goaway-nginx) holds nginx's config, logs and pid; PORT (default
#   19080) is its loopback port. Needs nginx >= 1.19.7 with HTTP/2 (Debian: apt-get install -y
#   nginx; measured with 1.22.1). RELOAD_MS (default 250) is the reload interval; JAVA_OPTS goes
#   to the program (-Dgoaway.traces=true prints each failure's stack trace).
set -euo pipefail
# Debian installs nginx in /usr/sbin, which a non-root PATH leaves out.
export PATH="$PATH:/usr/sbin:/sbin"
cd "$(dirname "$0")/.."
runs="${1:-1}"; calls="${2:-3000}"; threads="${3:-8}"; modes="${4:-bare,okretry-key,okretry-none}"
PREFIX="${PREFIX:-/tmp/okretry-goaway-nginx}"
PORT="${PORT:-19080}"
RELOAD_MS="${RELOAD_MS:-250}"
out=target/bench
mkdir -p "$out" "$PREFIX/logs" "$PREFIX/tmp"

strip_colors() { sed 's/\x1b\[[0-9;]*m//g'; }
mvn -B -q -Pbench test-compile 2>&1 | strip_colors
mvn -B -q -Pbench dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile="$out/cp.txt" 2>&1 | strip_colors
cp="target/test-classes:target/classes:$(cat "$out/cp.txt")"

cat > "$PREFIX/nginx.conf" <<EOF
worker_processes 1;
pid $PREFIX/nginx.pid;
error_log $PREFIX/logs/error.log warn;
events { worker_connections 1024; }
http {
  log_format calls '\$http_x_call_id \$status \$request_method';
  access_log $PREFIX/logs/access.log calls;
  client_body_temp_path $PREFIX/tmp/body;
  proxy_temp_path $PREFIX/tmp/proxy;
  fastcgi_temp_path $PREFIX/tmp/fastcgi;
  uwsgi_temp_path $PREFIX/tmp/uwsgi;
  scgi_temp_path $PREFIX/tmp/scgi;
  server {
    listen 127.0.0.1:$PORT http2;   # cleartext HTTP/2, prior knowledge
    location / { return 200 "ok\n"; }
  }
}
EOF
ngx() { nginx -p "$PREFIX" -c "$PREFIX/nginx.conf" "$@" 2>>"$PREFIX/logs/control.log"; }

ngx -t
ngx
trap 'kill "${reloader:-0}" 2>/dev/null || true; ngx -s quit || true' EXIT
sleep 0.5

log="$out/goaway.txt"
{
  echo "# $(date -u +%FT%TZ)  nproc=$(nproc)  $(nginx -v 2>&1)  reload every ${RELOAD_MS} ms"
  echo "# load: $(uptime | sed 's/.*load average: //')"
  echo "# $(java -version 2>&1 | head -1)"
} | tee "$log"
for ((r = 1; r <= runs; r++)); do
  ( while sleep "$(awk "BEGIN { print $RELOAD_MS / 1000 }")"; do ngx -s reload || true; done ) &
  reloader=$!
  java ${JAVA_OPTS:-} -cp "$cp" io.github.okretry.bench.GoawayPosts "http://127.0.0.1:$PORT/pay" \
    "$PREFIX/logs/access.log" "$calls" "$threads" "$modes" | tee -a "$log"
  kill "$reloader"; wait "$reloader" 2>/dev/null || true
done
echo "# load after: $(uptime | sed 's/.*load average: //')" | tee -a "$log"
echo "# results in $log"
