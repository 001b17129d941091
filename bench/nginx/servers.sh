#!/usr/bin/env bash
# Starts (or stops) the loopback nginx servers the crowd benchmarks (issue 14) measure against.
#
# Usage: bench/nginx/servers.sh start|stop|status [prefix-dir] [first-port]
#   prefix-dir  nginx prefix with conf/, logs/ and temp dirs (default /tmp/okretry-nginx)
#   first-port  the limiter's port; the others follow it (default 18080)
#
#   first-port+0  limiter: 20 requests/s, no burst (nginx limit_req), else 429 + Retry-After: 1
#   first-port+1  fails 100 %: 503 without Retry-After
#   first-port+2  fails 100 %: 503 with Retry-After: 1
#   first-port+3  fails 50 % at random: 503 without Retry-After, else 200
#
# Every server logs "$msec $status" to logs/<port>.log, so attempts are counted server-side.
# Needs nginx (Debian: apt-get install -y nginx); uses only loopback and the prefix dir, never the
# system-wide configuration.
set -euo pipefail
# Debian installs nginx in /usr/sbin, which a non-root PATH leaves out.
export PATH="$PATH:/usr/sbin:/sbin"
action="${1:-start}"
prefix="${2:-/tmp/okretry-nginx}"
port="${3:-18080}"
p0=$port; p1=$((port + 1)); p2=$((port + 2)); p3=$((port + 3))

case "$action" in
  stop)
    [ -f "$prefix/logs/nginx.pid" ] && nginx -p "$prefix" -c conf/nginx.conf -s stop || true
    exit 0 ;;
  status)
    [ -f "$prefix/logs/nginx.pid" ] && kill -0 "$(cat "$prefix/logs/nginx.pid")" 2>/dev/null && echo running || echo stopped
    exit 0 ;;
  start) ;;
  *) echo "usage: $0 start|stop|status [prefix] [first-port]" >&2; exit 2 ;;
esac

mkdir -p "$prefix/conf" "$prefix/logs" "$prefix/tmp" "$prefix/html"
echo ok > "$prefix/html/index.html"
cat > "$prefix/conf/nginx.conf" <<CONF
worker_processes 1;
pid $prefix/logs/nginx.pid;
error_log $prefix/logs/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $prefix/tmp/body;
  proxy_temp_path $prefix/tmp/proxy;
  fastcgi_temp_path $prefix/tmp/fastcgi;
  uwsgi_temp_path $prefix/tmp/uwsgi;
  scgi_temp_path $prefix/tmp/scgi;
  keepalive_requests 100000;
  log_format timed '\$msec \$status';
  limit_req_zone \$server_port zone=limiter:1m rate=20r/s;
  limit_req_status 429;
  map \$status \$retry_after { 429 1; default ""; }
  split_clients "\${request_id}" \$coin { 50% fail; * ok; }

  server {
    listen 127.0.0.1:$p0;
    access_log $prefix/logs/$p0.log timed;
    # A static file, not "return": return runs in the rewrite phase, before limit_req would.
    root $prefix/html;
    location / {
      limit_req zone=limiter;
      add_header Retry-After \$retry_after always;
      try_files /index.html =404;
    }
  }
  server {
    listen 127.0.0.1:$p1;
    access_log $prefix/logs/$p1.log timed;
    location / { return 503; }
  }
  server {
    listen 127.0.0.1:$p2;
    access_log $prefix/logs/$p2.log timed;
    location / { add_header Retry-After 1 always; return 503; }
  }
  server {
    listen 127.0.0.1:$p3;
    access_log $prefix/logs/$p3.log timed;
    location / {
      if (\$coin = fail) { return 503; }
      return 200 "ok\n";
    }
  }
}
CONF
nginx -p "$prefix" -c conf/nginx.conf -t 2>&1 | grep -v "^nginx: the configuration" || true
if [ -f "$prefix/logs/nginx.pid" ] && kill -0 "$(cat "$prefix/logs/nginx.pid")" 2>/dev/null; then
  nginx -p "$prefix" -c conf/nginx.conf -s reload
else
  nginx -p "$prefix" -c conf/nginx.conf
fi
echo "nginx on 127.0.0.1:$p0 (limiter 20 r/s, 429 + Retry-After: 1), :$p1 (503), :$p2 (503 + Retry-After: 1), :$p3 (50 % 503); logs in $prefix/logs"
