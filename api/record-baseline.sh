#!/usr/bin/env bash
# Re-records the public API baseline that japicmp checks in `mvn verify` (pom.xml, execution
# api-baseline): builds the jar from the working tree, stores it as api/okretry-api.jar, and
# writes api/okretry.api, a readable listing of the public API (javap -public of every public
# class in io.github.okretry). Run it when a change to the public API is meant, and commit both
# files with that change: the diff of okretry.api is the API change, for review.
#
#   api/record-baseline.sh                          # extra arguments go to mvn
set -euo pipefail
cd "$(dirname "$0")/.."

# Only the main jar is needed: no tests, Javadoc, sources jar or Gradle module metadata.
mvn -B -q clean package -DskipTests -Djapicmp.skip=true -Dmaven.javadoc.skip=true \
  -Dmaven.source.skip=true -Dmaven.antrun.skip=true "$@"

jar=$(ls target/okretry-*.jar | grep -v -e '-sources\.jar$' -e '-javadoc\.jar$')
cp "$jar" api/okretry-api.jar

# Public top-level and nested classes of the exported package, sorted, one javap block each.
classes=$(unzip -Z1 api/okretry-api.jar 'io/github/okretry/*.class' \
  | grep -v '^io/github/okretry/internal/' | sed 's/\.class$//; s|/|.|g' | LC_ALL=C sort)
{
  echo "# Public API of okretry, recorded by api/record-baseline.sh from $(basename "$jar")."
  echo "# mvn verify fails on any difference from api/okretry-api.jar (japicmp)."
  for class in $classes; do
    javap -public -cp api/okretry-api.jar "$class" \
      | grep -v '^Compiled from' \
      | awk 'NR == 1 && $0 !~ /^public / { skip = 1 } !skip'
  done
} > api/okretry.api

echo "recorded $(basename "$jar") as api/okretry-api.jar; public API in api/okretry.api:"
grep -c '^public ' api/okretry.api | sed 's/$/ public classes/'
