#!/usr/bin/env bash
# Issue 44: a real L4 balancer by hand. Runs HAProxy in the foreground (-db) in TCP mode, round
# robin over loopback backends, the first connection to the first backend, no health checks: the
# configuration L4BalancerRealServerTest generates (src/test/java/io/github/okretry/HaProxy.java).
# Ctrl-C (or SIGTERM) stops it and removes its temporary directory.
#
# Usage: bench/haproxy.sh PORT BACKEND_PORT [BACKEND_PORT...]
#   e.g. bench/haproxy.sh 19180 19181 19182   (19181 gets connections 1, 3, 5…; 19182 2, 4, 6…)
# Needs haproxy (Debian: apt-get install -y haproxy; measured with 2.6.12). The test itself:
#   mvn -B test -Dokretry.excludedGroups= -Dgroups=soak -Dtest=L4BalancerRealServerTest -Dokretry.printTables=true
set -euo pipefail
# Debian installs haproxy in /usr/sbin, which a non-root PATH leaves out.
export PATH="$PATH:/usr/sbin:/sbin"
if [ "$#" -lt 2 ]; then
  echo "usage: $0 PORT BACKEND_PORT [BACKEND_PORT...]" >&2
  exit 2
fi
port="$1"; shift
dir="$(mktemp -d -t okretry-haproxy.XXXXXX)"
trap 'rm -rf "$dir"' EXIT
{
  echo "global"
  echo "  maxconn 1024"
  echo "defaults"
  echo "  mode tcp"
  echo "  timeout connect 2s"
  echo "  timeout client 60s"
  echo "  timeout server 60s"
  echo "frontend front"
  echo "  bind 127.0.0.1:$port"
  echo "  default_backend replicas"
  echo "backend replicas"
  echo "  balance roundrobin"
  i=0
  for backend in "$@"; do
    echo "  server b$i 127.0.0.1:$backend"
    i=$((i + 1))
  done
} > "$dir/haproxy.cfg"
haproxy -c -q -f "$dir/haproxy.cfg"
echo "haproxy: 127.0.0.1:$port -> $* (round robin, mode tcp); config $dir/haproxy.cfg" >&2
haproxy -db -f "$dir/haproxy.cfg" &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$dir"' EXIT
trap 'exit 0' INT TERM
wait "$pid"
