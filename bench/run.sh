#!/usr/bin/env bash
# Builds and runs okretry's benchmarks (issue 5). Not part of CI, which only compiles them with
#   mvn -B -q -Dstyle.color=never -Pbench test-compile
#
# Usage: bench/run.sh [all|jmh|overhead|alloc|paired|micro|retried|deadline|jitter|overload|hedge|waiting|suppressed|logs|origins|crowd|quota|hostile-quota|newconn] [extra args...]
#   JMH_OPTS overrides the JMH run settings (default "-f 1 -t 1 -wi 3 -i 5 -w 2s -r 2s");
#   extra args go to JMH, or to the program for deadline|jitter|overload|suppressed|hostile-quota|newconn.
# bench/goaway.sh (real nginx, HTTP/2 GOAWAY) is separate: it needs nginx.
# Settings fit a shared 2-core machine: one fork, one thread, short iterations. Numbers from one
# run are comparable with each other (ratios), not with another run's.
set -euo pipefail
cd "$(dirname "$0")/.."
what="${1:-all}"; shift || true
out=target/bench
mkdir -p "$out"

strip_colors() { sed 's/\x1b\[[0-9;]*m//g'; }
mvn -B -q -Pbench test-compile 2>&1 | strip_colors
mvn -B -q -Pbench dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile="$out/cp.txt" 2>&1 | strip_colors
cp="target/test-classes:target/classes:$(cat "$out/cp.txt")"
java_opts=(-Xms512m -Xmx512m)

machine() {
  echo "# $(date -u +%FT%TZ)  nproc=$(nproc)  cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs)"
  echo "# load: $(uptime | sed 's/.*load average: //')"
  echo "# $(java -version 2>&1 | head -1)"
}

jmh() { # name, benchmark regex, extra args
  local name="$1" regex="$2"; shift 2
  machine | tee "$out/$name.txt"
  java "${java_opts[@]}" -cp "$cp" org.openjdk.jmh.Main "$regex" \
    ${JMH_OPTS:--f 1 -t 1 -wi 3 -i 5 -w 2s -r 2s} -rf json -rff "$out/$name.json" "$@" | tee -a "$out/$name.txt"
  echo "# load after: $(uptime | sed 's/.*load average: //')" | tee -a "$out/$name.txt"
}

main() { # name, class, args
  local name="$1" cls="$2"; shift 2
  machine | tee "$out/$name.txt"
  java "${java_opts[@]}" -cp "$cp" "$cls" "$@" | tee -a "$out/$name.txt"
  echo "# load after: $(uptime | sed 's/.*load average: //')" | tee -a "$out/$name.txt"
}

case "$what" in
  jmh)      jmh success 'SuccessPathBenchmark' -prof gc "$@" ;;
  overhead) jmh overhead 'CallOverheadBenchmark|SuccessPathBenchmark' -p variant=bare -prof gc "$@" ;;
  alloc)    main alloc io.github.okretry.bench.AllocationBreakdown "$@" ;;
  paired)   main paired io.github.okretry.bench.PairedSuccessPath "$@" ;;
  micro)    jmh intercept 'InterceptBenchmark|GiveUpBenchmark' -prof gc "$@" ;;
  retried)  jmh retried 'RetriedCallBenchmark' -prof gc "$@" ;;
  deadline) main deadline io.github.okretry.bench.DeadlinePrecision "$@" ;;
  jitter)   main jitter io.github.okretry.bench.JitterExperiment "$@" ;;
  overload) main overload io.github.okretry.bench.LiveOverload "$@" ;;
  hedge)    main "hedge-${1:-all}" io.github.okretry.bench.HedgeBench "$@" ;;
  waiting)  main waiting io.github.okretry.bench.WaitingCost "$@" ;;
  suppressed) main suppressed io.github.okretry.bench.SuppressedMemory "$@" ;;
  logs)     java -Dokretry.logLevel=DEBUG -cp "$cp" io.github.okretry.bench.HostileStatusLineLog 2>"$out/logs.txt"
            python3 -c 'import sys; t = open(sys.argv[1], encoding="utf-8").read(); ls = [l for l in t.split("\n") if "RetryInterceptor" in l]; bad = [hex(ord(c)) for l in ls for c in l if ord(c) < 32 or 127 <= ord(c) <= 159 or 0x202a <= ord(c) <= 0x202e or 0x2066 <= ord(c) <= 0x2069]; print(len(ls), "debug lines, longest", max(map(len, ls)), "chars, control characters:", bad, ", CR in the output:", t.count(chr(13)))' "$out/logs.txt" ;;
  origins)  main origins io.github.okretry.bench.OriginScaling "$@" ;;
  crowd)    main "crowd-${1:-burst}" io.github.okretry.bench.CrowdBench "$@" ;;
  quota)    jmh quota 'QuotaReadBenchmark' -prof gc "$@" ;;
  hostile-quota) main hostile-quota io.github.okretry.bench.HostileQuotaCost "$@" ;;
  newconn)  main newconn io.github.okretry.bench.NewConnectionRetry "$@" ;;
  all)
    jmh success 'SuccessPathBenchmark' -prof gc
    jmh overhead 'CallOverheadBenchmark|SuccessPathBenchmark' -p variant=bare -prof gc
    main alloc io.github.okretry.bench.AllocationBreakdown
    main paired io.github.okretry.bench.PairedSuccessPath
    jmh intercept 'InterceptBenchmark|GiveUpBenchmark' -prof gc
    main deadline io.github.okretry.bench.DeadlinePrecision
    main jitter io.github.okretry.bench.JitterExperiment
    main overload io.github.okretry.bench.LiveOverload
    main waiting io.github.okretry.bench.WaitingCost
    ;;
  *) echo "unknown: $what (all|jmh|overhead|alloc|paired|micro|deadline|jitter|overload|waiting|suppressed|logs|origins|crowd|quota|hostile-quota|newconn)" >&2; exit 2 ;;
esac
echo "# results in $out/"
