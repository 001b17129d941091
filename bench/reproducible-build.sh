#!/usr/bin/env bash
# Builds the project twice from clean, the second time under a fake clock a year later if
# faketime is installed (apt-get install -y faketime), and compares the SHA-256 of every file
# `mvn package` attaches: the jar, the sources and Javadoc jars and the Gradle .module.
# Extra arguments go to both builds. Not run by CI (two full packages).
#
#   bench/reproducible-build.sh
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)

build() {  # $1: where to copy the attached files; the rest: command prefix
  local dest=$1; shift
  "$@" mvn -B -q clean package -DskipTests "${MVN_ARGS[@]}" >/dev/null
  mkdir -p "$dest"
  cp target/okretry-*.jar target/okretry-*.module "$dest"/
}

MVN_ARGS=("$@")
build "$out/first"
if command -v faketime >/dev/null; then
  build "$out/second" faketime "$(date -u -d '+1 year' '+%Y-%m-%d %H:%M:%S')"
else
  echo "(faketime not installed: second build at the real time)"
  build "$out/second" env
fi

(cd "$out/first" && sha256sum -- *) > "$out/first.sha256"
(cd "$out/second" && sha256sum -- *) > "$out/second.sha256"
cat "$out/first.sha256"
if diff "$out/first.sha256" "$out/second.sha256"; then
  echo "reproducible: both builds gave the same $(wc -l < "$out/first.sha256") files"
else
  echo "NOT reproducible: the files above differ (kept in $out)"
  exit 1
fi
rm -rf "$out"
