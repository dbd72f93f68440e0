#!/usr/bin/env bash
# Makes .gpu-bundle/ at the repository root: a JRE and the classpath that the engine tests and
# io.gpusort.examples.EngineBenchmark need on the GPU host, which has no Java. Spark is left out
# (no engine test or engine benchmark loads it; only its logging jars are kept), and so are JUnit's
# separate jars: the bundle carries junit-platform-console-standalone instead, of the JUnit
# platform version the build uses.
#
#   kernels/gpu-host/bundle.sh [--no-build] [--spark] [--out DIR] [-PPROFILE ...]
#
# Without --no-build it first runs `mvn -B -o -q -DskipTests package` at the repository root.
# --spark keeps Spark and every other provided jar (less rocksdbjni, which no run here uses) and
# adds the thin examples jar, for plugin-run.sh: a standalone cluster on the GPU host. That makes
# three or four parts instead of one.
# -P options pick the Spark line (as for mvn: -Pspark-3.5 -Pscala-2.12; none: the default line)
# for the build and the classpath; --out puts the parts in DIR (default .gpu-bundle), so that
# bundles of two lines can be staged side by side (host.sh's GPU_HOST_ROOT keeps them apart there).
# The parts are written by make-bundle.sh (shared/gpu-host/; MAKE_BUNDLE to use another copy); see
# kernels/gpu-host/README.md for the device commands that stage and run them.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
make_bundle=${MAKE_BUNDLE:-$repo/../shared/gpu-host/make-bundle.sh}
out="$repo/.gpu-bundle"
profiles=()

build=1
spark=0
while [ $# -gt 0 ]; do
  case "$1" in
    --no-build) build=0 ;;
    --spark) spark=1 ;;
    --out) shift; out=$(cd "$repo" && mkdir -p "$1" && cd "$1" && pwd) ;;
    -P*) profiles+=("$1") ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1 (use --no-build, --spark, --out DIR, -PPROFILE)" >&2; exit 2 ;;
  esac
  shift
done
[ -f "$make_bundle" ] || {
  echo "make-bundle.sh not found at $make_bundle (set MAKE_BUNDLE)" >&2; exit 2; }

cd "$repo"
if [ $build = 1 ]; then
  mvn -B -o -q "${profiles[@]}" -DskipTests package
fi

# Project classes: the kernels' binaries, the engines, the engine tests, the benchmark.
project=(kernels/target/classes spark-gpusort-core/target/classes
  spark-gpusort-core/target/test-classes spark-gpusort-examples/target/classes)
if [ $spark = 1 ]; then
  # The application jar spark-submit is given (its classes also reach executors on the classpath).
  # (the newest: target/ may also hold another line's, built before)
  project+=("$(ls -t spark-gpusort-examples/target/original-spark-gpusort-examples_*.jar | head -n 1)")
fi
for dir in "${project[@]}"; do
  [ -e "$dir" ] || { echo "$dir is missing: build first (drop --no-build)" >&2; exit 2; }
done

# Third-party jars of the core's tests, less the project's own modules (their class folders are
# above) and less Spark, which is provided: of the provided jars only the logging the engines use
# (slf4j, and log4j 2 behind it, configured by the core's log4j2-test.properties) is kept. The
# core finds the kernels module in the reactor only where this invocation compiles it, hence
# `compile` (up to date after the package above: quick).
deps_file=spark-gpusort-core/target/gpu-bundle.deps
rm -f "$deps_file"
resolve=("${profiles[@]}" -pl spark-gpusort-core -am compile dependency:list -DexcludeGroupIds=io.gpusort -Dsort=true
  -DoutputAbsoluteArtifactFilename=true -DoutputFile=target/gpu-bundle.deps)
mvn -B -o -q "${resolve[@]}" >/dev/null 2>&1 || mvn -B -q "${resolve[@]}"

provided_kept=" org.slf4j:slf4j-api org.apache.logging.log4j:log4j-api org.apache.logging.log4j:log4j-core org.apache.logging.log4j:log4j-slf4j2-impl "
third_party=()
platform_version=""
while read -r line; do
  line=${line%% -- *}                          # newer plugins append " -- module <name>"
  [[ "$line" == *.jar ]] || continue
  jar=${line##*:}                              # group:artifact:type[:classifier]:version:scope:path
  coords=${line%:*}
  scope=${coords##*:}
  IFS=: read -r group artifact _ <<< "$coords"
  name=$(basename "$jar")
  case "$name" in
    junit-platform-engine-*.jar) platform_version=${name#junit-platform-engine-}; platform_version=${platform_version%.jar} ;;
  esac
  case "$group" in
    # the console launcher brings JUnit, its engines and their few dependencies
    org.junit.*|org.opentest4j|org.apiguardian) continue ;;
  esac
  if [ "$scope" = provided ] && [ $spark = 0 ] && [[ "$provided_kept" != *" $group:$artifact "* ]]; then
    continue
  fi
  case "$name" in
    rocksdbjni-*.jar) continue ;;
    # natives for platforms other than the GPU host's (Linux x86-64)
    *windows*|*macos*|*apple*|*linux-aarch64*|*linux-arm*|*linux-ppc*|*linux-riscv*) continue ;;
  esac
  third_party+=("$jar")
done < "$deps_file"
[ -n "$platform_version" ] || { echo "no junit-platform-engine in $deps_file" >&2; exit 2; }

launcher_coords=org.junit.platform:junit-platform-console-standalone:$platform_version
launcher="$HOME/.m2/repository/org/junit/platform/junit-platform-console-standalone/$platform_version/junit-platform-console-standalone-$platform_version.jar"
if [ ! -f "$launcher" ]; then
  mvn -B -q dependency:get -Dartifact="$launcher_coords" -Dtransitive=false
fi

classpath=""
for entry in "${project[@]/#/$repo/}" "${third_party[@]}" "$launcher"; do
  classpath="$classpath${classpath:+:}$entry"
done
echo "bundle: ${#project[@]} project folders, $launcher_coords and these jars:" >&2
printf '  %s\n' "${third_party[@]##*/}" >&2
bash "$make_bundle" "$out" "$classpath"
