#!/usr/bin/env bash
# Checks okretry's consumer rules (src/main/resources/META-INF/proguard/okretry.pro) the way an
# app meets them: builds okretry's jar, compiles a small app that uses it (bench/r8/Main.java:
# retried calls on both drivers against a loopback server, a listener of network requests, the two
# OkHttp HTTP/2 failures okretry knows by class name, and okretry's reflective look), shrinks app,
# okretry and their runtime dependencies with R8 (renaming on) under the rules it reads from the
# jar, and runs the shrunk jar, printing what R8 printed and what the names okretry reads became.
# Then the app and okretry desugared by D8 for Android API 21, as below API 24 (default methods
# become synthetic forwarders), run on the JVM. Then two controls without the rules, to show what
# each line does. jspecify is left out of R8's input, as an app may leave it out of its runtime.
# Exits 0 if the shrunk and the desugared app run and check out. Not run by CI (R8 is a 20 MB
# download; ~3 min of CPU in all).
#
#   bench/r8-check.sh                  # R8 8.5.35 from Maven Central
#   R8_VERSION=8.x.y bench/r8-check.sh
set -euo pipefail
cd "$(dirname "$0")/.."
r8_version=${R8_VERSION:-8.5.35}
java_home=${JAVA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")}
out=target/r8-check
rm -rf "$out"
mkdir -p "$out/classes"

# okretry's jar (compile + jar only: no tests, no Javadoc), its runtime dependencies, and R8.
mvn -B -q compile jar:jar
jar=$(ls target/okretry-*.jar | grep -v -e '-sources' -e '-javadoc' | head -1)
mvn -B -q dependency:build-classpath -DincludeScope=runtime -DexcludeArtifactIds=jspecify \
  -Dmdep.outputFile="$out/deps.txt"
mvn -B -q dependency:copy -Dartifact="com.android.tools:r8:$r8_version" -DoutputDirectory="$out"
deps=$(cat "$out/deps.txt")
r8=("$java_home/bin/java" -cp "$out/r8-$r8_version.jar" com.android.tools.r8.R8)

"$java_home/bin/javac" --release 17 -cp "$jar:$deps" -d "$out/classes" bench/r8/Main.java
(cd "$out/classes" && "$java_home/bin/jar" cf ../app.jar .)
# okretry's jar without its rules, for the controls.
cp "$jar" "$out/okretry-without-rules.jar"
zip -q -d "$out/okretry-without-rules.jar" 'META-INF/proguard/*'
echo '-dontwarn org.jspecify.annotations.**' >"$out/dontwarn-only.pro"

shrink() {  # $1: okretry's jar; $2: the output jar; the rest: more R8 options
  local okretry=$1 output=$2
  shift 2
  # shellcheck disable=SC2086 # the dependencies are split on purpose, one input each
  "${r8[@]}" --release --classfile --lib "$java_home" --pg-conf bench/r8/app.pro \
    --pg-map-output "$output.map" --output "$output" "$@" "$out/app.jar" "$okretry" ${deps//:/ }
}

names() {  # $1: a mapping file: what the names okretry reads became
  grep -E '^okhttp3\.internal\.http2\.(StreamReset|ConnectionShutdown)Exception ' "$1" || true
  echo "RetryListener.onNetworkRequest and its overrides: $(grep -E \
    '^ +[0-9:]*void onNetworkRequest\(okhttp3.Request,int,int\)' "$1" | sed 's/.* -> //' |
    sort | uniq -c | tr -s ' ' | paste -sd, -)"
}

# The rules inside the jar, as an app's build meets them: R8 reads META-INF/proguard/*.pro from
# each input jar itself (the Android Gradle plugin hands them to it too).
echo "== R8 $r8_version, okretry's jar with its rules"
shrink "$jar" "$out/shrunk.jar" 2>&1 | tee "$out/r8.txt"
echo "(R8 printed $(wc -l <"$out/r8.txt") lines; in $(du -ck "$out/app.jar" "$jar" ${deps//:/ } |
  tail -1 | cut -f1) KB, out $(du -k "$out/shrunk.jar" | cut -f1) KB)"
names "$out/shrunk.jar.map"
status=0
"$java_home/bin/java" -cp "$out/shrunk.jar" Main || status=1

# Android below API 24 runs no default methods: D8 and R8 move their bodies to a companion class
# and give each class that inherits one a synthetic forwarder, which okretry must not take for an
# override. D8 desugars app and okretry here (class files out, so the JVM can run them).
echo "== D8 $r8_version, desugared for Android API 21 (no shrinking)"
# shellcheck disable=SC2046 # one --classpath per dependency
"$java_home/bin/java" -cp "$out/r8-$r8_version.jar" com.android.tools.r8.D8 --release --classfile \
  --min-api 21 --lib "$java_home" $(printf -- '--classpath %s ' ${deps//:/ }) \
  --output "$out/desugared.jar" "$out/app.jar" "$jar" 2>&1 | { grep -v 'already exists' || true; }
"$java_home/bin/javap" -p -v -cp "$out/desugared.jar" 'Main$Quiet' |
  grep -A2 'public void onNetworkRequest' | grep flags | sed 's/^ */Main$Quiet.onNetworkRequest /'
"$java_home/bin/java" -cp "$out/desugared.jar:$deps" Main || status=1

echo "== control 1: okretry's jar without its rules"
if shrink "$out/okretry-without-rules.jar" "$out/control1.jar" >"$out/r8-control1.txt" 2>&1; then
  echo "R8 succeeded: the -dontwarn line is not needed"
else
  grep -v 'already exists' "$out/r8-control1.txt" | grep -E '^(Error|Warning)' | head -3
fi

echo "== control 2: without its rules but their -dontwarn line"
shrink "$out/okretry-without-rules.jar" "$out/control2.jar" --pg-conf "$out/dontwarn-only.pro" \
  >"$out/r8-control2.txt" 2>&1 || { cat "$out/r8-control2.txt"; exit 1; }
names "$out/control2.jar.map"
"$java_home/bin/java" -cp "$out/control2.jar" Main || true
echo "(expected: the look fails where the method was renamed, and okretry falls back to watching,"
echo " so the calls above still heard every network request; R8 rewrote the two exception names in"
echo " okretry's strings by itself)"
exit $status
