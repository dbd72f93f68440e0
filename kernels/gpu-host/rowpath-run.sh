#!/usr/bin/env bash
# On the GPU host, the row path's checks and measurements (issue 15), in parts that fit one device
# call each. Needs the bundle made with --spark, every part staged. Writes logs under $1.
#
#   bash kernels/gpu-host/rowpath-run.sh OUTDIR
#
# Environment (1 runs a part, 0 or unset leaves it out):
#   GPU_TESTS  the GPU-tagged engine tests (io.gpusort.engine; ENGINE_TESTS narrows them) and the
#              Spark-level CudaRowPathTest (1e7 rows a key type, local[16]; ROWPATH_TESTS= drops it)
#   PROFILE    SortBenchmark's within-partition cases, 1e8 cached rows, one repetition, under JFR
#              (profile settings) for the bundle's classes and, with OLD, the old ones
#   FULL       SortBenchmark, every case, 1e8 cached rows, REPS repetitions (3), new and OLD
#   VARIANTS   SortBenchmark's within-partition cases on Parquet input (1e8 rows) and with string
#              keys (2e7 rows), new and OLD
#   STRING     string keys (2e7 rows), within-partition cases, new and OLD as runs of their own,
#              alternating, ROUNDS times (2)
#   POOL       within-partition cases, 1e8 cached rows, with the host pool's idle bound at 8g
#              (the default) and 24g, as runs of their own
#   COLUMNAR   within-partition cases, columnar intake against rows (intake.columnar=false) as
#              cases of one run, on cached and Parquet input (1e8 rows); string keys (2e7 rows)
#   PROFILE_STRING  as PROFILE, string keys (2e7 rows), PROFILE_REPS repetitions (1), samples
#              attributed to inlined methods (DebugNonSafepoints); PROFILE_ARGS adds SortBenchmark
#              arguments (--conf k=v: the setting profiled)
#   OVERLAP    within-partition cases, 1e8 cached rows: pages sent while rows arrive and output
#              while rows come back (the defaults) against either or both off, as cases of one run;
#              then string keys (2e7 rows) the same way
#   CONCURRENT within-partition cases, 1e8 cached rows, with cuda.concurrentTasks 2 and 16 (CONC
#              overrides: a list of values) as processes of their own, alternating, twice each
#   COPY       RowCopyBenchmark: a row copied into pages by Unsafe.copyMemory against a word loop,
#              one thread and 16 (SIZES: row bytes, 136,256)
#   STAGING    within-partition cases, rows staged through the 2 MB ring (the default) against
#              written in their pages (stagingBytes=0) and an 8 MB ring, as cases of one run, on
#              STAGING_INPUTS (string cached parquet: 2e7 string-key rows, 1e8 cached, 1e8 Parquet)
#   CACHE_COLUMNS  string keys (2e7 cached rows), within-partition cases: the cache's batches read
#              by the sort (intake.cacheBatches, the default) against the cache's rows, cases of one
#              run
#   GLOBAL     the global cases (hash-shuffle floor, orderBy, byKey in sort and merge mode, SQL
#              ORDER BY through the extension: the last two the exchange GpuRangeSortExchange), 1e8
#              cached rows, REPS repetitions (3); GLOBAL_INPUTS adds parquet (1e8 rows from Parquet)
#              and string (2e7 string-key rows); GLOBAL_ARGS (every input) and STRING_ARGS add
#              SortBenchmark arguments (--variant label:key=value: a byKey case with those
#              settings); GLOBAL_JFR=1 records each run and folds its task threads' samples
#   FILE       the whole Parquet -> global sort -> Parquet job (SortBenchmark --cases file): no sort
#              (the floor), Spark's read-orderBy-write, FileSort, SQL ORDER BY with the plugin;
#              1e8 rows (FILE_ROWS), REPS repetitions (3); each output checked once; FILE_JFR=1
#              records the run and folds its task threads' samples
#   MEMORY     the memory, spill and cancellation suites as the build runs them (surefire's default,
#              spilling and small-heap executions) with engine auto, which is cuda there: each
#              log's first line names the engine its session resolved
#   FINAL      page sizes (chunk.maxBytes 8m, 32m, 128m) as cases of one run; 8 and 16 GPU tasks
#              at once against the default 2, on cached, Parquet and string-key input; the tests
#              of the shared engine's gather, a sort-merge join's sorts and fixed-width rows
# OLD: a folder holding core/, the spark-gpusort-core classes of the build to compare, put ahead
# of the bundle's on the classpath (the benchmark itself is the bundle's, so both are measured
# alike). ENGINE (cuda), MASTER (local[16]), HEAP (-Xmx80g).
set -uo pipefail
out=$1
host_sh=$(ls .gpu-bundle/part-*/host.sh | tail -n 1)
engine=${ENGINE:-cuda}
master=${MASTER:-local[16]}
heap=${HEAP:-80g}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"
nproc | tee -a "$out/gpu.txt"

# $1: label; $2: classpath prefix (empty: the bundle's classes); $3: extra JVM options; rest:
# SortBenchmark's arguments.
bench() {
  local label=$1 prefix=$2 jvm=$3
  shift 3
  bash "$host_sh" run -- bash -c "java -Xmx$heap $jvm -cp \"$prefix\${CLASSPATH}\" \
    io.gpusort.examples.SortBenchmark --engine $engine --master '$master' $*" \
    > "$out/bench-$label.txt" 2>&1
  echo "SortBenchmark $label exit $?"
  grep -E "^(case|scan|Dataset|GpuSort|SQL|hash|Parquet|read|FileSort|tasks|median task|  --)" "$out/bench-$label.txt"
}
old_prefix=""
[ -n "${OLD:-}" ] && old_prefix="$OLD/core:"

if [ "${GPU_TESTS:-0}" = 1 ]; then
  bash "$host_sh" run -- java -Xmx48g -Dgpusort.memory.trackLeaks=true \
    -Dgpusort.test.master='local[16]' org.junit.platform.console.ConsoleLauncher execute \
    --disable-banner --disable-ansi-colors ${ENGINE_TESTS:---select-package io.gpusort.engine} \
    ${ROWPATH_TESTS---select-class io.gpusort.sql.CudaRowPathTest} --include-tag gpu \
    --details tree > "$out/gpu-tests.txt" 2>&1
  echo "gpu tests exit $?"
  grep -E "tests (successful|failed|aborted|skipped)|CudaRowPathTest .*match" "$out/gpu-tests.txt"
  grep -E "✘|=> |Exception" "$out/gpu-tests.txt" | head -20
fi
if [ "${COPY:-0}" = 1 ]; then
  bash "$host_sh" run -- bash -c "java -Xmx8g -cp \"\${CLASSPATH}\" \
    io.gpusort.examples.RowCopyBenchmark --threads 16 --sizes ${SIZES:-136,256}" \
    > "$out/row-copy.txt" 2>&1
  echo "RowCopyBenchmark exit $?"
  grep -vE "^NOTE" "$out/row-copy.txt"
fi
if [ "${MEMORY:-0}" = 1 ]; then
  # $1: label; $2: JVM options; rest: the launcher's selections.
  suite() {
    local label=$1 jvm=$2
    shift 2
    bash "$host_sh" run -- java $jvm -Dgpusort.memory.trackLeaks=true \
      org.junit.platform.console.ConsoleLauncher execute --disable-banner --disable-ansi-colors \
      "$@" --details tree > "$out/memory-$label.txt" 2>&1
    echo "memory suite $label exit $?"
    grep -E "spark-gpusort tests: engine|SpillTest: .*engine|tests (successful|failed|aborted)" \
      "$out/memory-$label.txt"
    grep -E "✘" "$out/memory-$label.txt" | head -10
  }
  suite default "-Xmx8g" --select-class io.gpusort.sql.CancellationTest \
    --select-class io.gpusort.sql.SpillTest --select-class io.gpusort.sql.GpuSortOracleTest \
    --select-class io.gpusort.sql.SqlExtensionTest --exclude-tag small-heap
  suite spilling "-Xmx8g -Dgpusort.test.spill=true" --select-class io.gpusort.sql.SpillTest \
    --select-class io.gpusort.sql.GpuSortOracleTest --select-class io.gpusort.sql.SqlExtensionTest \
    --exclude-tag small-heap
  suite small-heap "-Xmx512m" --select-class io.gpusort.sql.LargePartitionSpillTest \
    --select-class io.gpusort.sql.OffHeapSpillTest --include-tag small-heap
fi
# Folds the task threads' execution samples of a recording into "count frame;frame;..." lines,
# leaf first, 24 frames deep, methods without arguments: small enough to bring back.
fold_samples() {  # $1: recording, $2: output, $3: event (jdk.ExecutionSample)
  local event=${3:-jdk.ExecutionSample}
  bash "$host_sh" run -- jfr print --events "$event" --stack-depth 64 "$1" | awk -v ev="$event" -f "$(dirname "$0")/fold-samples.awk" \
    | sort | uniq -c | sort -rn > "$2"
  echo "$2: $(awk '{ s += $1 } END { print s }' "$2") samples, $(wc -l < "$2") stacks"
}
if [ "${PROFILE:-0}" = 1 ]; then
  jfr="-XX:StartFlightRecording=filename=/tmp/new.jfr,settings=profile"
  bench profile-new "" "$jfr" --rows 100000000 --reps 1 --cases within
  fold_samples /tmp/new.jfr "$out/samples-new.txt"
  if [ -n "$old_prefix" ]; then
    jfr="-XX:StartFlightRecording=filename=/tmp/old.jfr,settings=profile"
    bench profile-old "$old_prefix" "$jfr" --rows 100000000 --reps 1 --cases within
    fold_samples /tmp/old.jfr "$out/samples-old.txt"
  fi
fi
if [ "${PROFILE_STRING:-0}" = 1 ]; then
  # Samples attributed to the inlined method they fall in, not the nearest safepoint's.
  jfr="-XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints"
  jfr="$jfr -XX:StartFlightRecording=filename=/tmp/string.jfr,settings=profile"
  bench profile-string "" "$jfr" --rows 20000000 --reps "${PROFILE_REPS:-1}" --cases within \
    --key string ${PROFILE_ARGS:-}
  fold_samples /tmp/string.jfr "$out/samples-string.txt"
  # Task threads in native code (JNI: the CUDA driver's calls), which execution samples miss.
  fold_samples /tmp/string.jfr "$out/native-string.txt" jdk.NativeMethodSample
fi
if [ "${POOL:-0}" = 1 ]; then
  # The idle bound of the host memory pool as runs of their own (it is process-wide).
  for pool in 8g 24g; do
    bench pool-$pool "" "" --rows 100000000 --reps "${REPS:-3}" --cases within \
      --conf spark.gpusort.memory.poolMaxIdleBytes=$pool
  done
fi
if [ "${OVERLAP:-0}" = 1 ]; then
  v="--variant no-ahead:spark.gpusort.gather.uploadAhead=false"
  v="$v --variant no-stream:spark.gpusort.gather.streamOutput=false"
  v="$v --variant neither:spark.gpusort.gather.uploadAhead=false,spark.gpusort.gather.streamOutput=false"
  bench overlap-cached "" "" --rows 100000000 --reps "${REPS:-3}" --cases within $v
  bench overlap-string "" "" --rows 20000000 --reps "${REPS:-3}" --cases within --key string $v
fi
if [ "${STAGING:-0}" = 1 ]; then
  v="--variant unstaged:spark.gpusort.gather.stagingBytes=0"
  v="$v --variant ring8m:spark.gpusort.gather.stagingBytes=8m"
  for input in ${STAGING_INPUTS:-string cached parquet}; do
    case $input in
      string) bench staging-string "" "" --rows 20000000 --reps "${REPS:-5}" --cases within \
        --key string $v ;;
      cached) bench staging-cached "" "" --rows 100000000 --reps "${REPS:-3}" --cases within $v ;;
      parquet) bench staging-parquet "" "" --rows 100000000 --reps "${REPS:-3}" --cases within \
        --input parquet $v ;;
    esac
  done
fi
if [ "${GLOBAL:-0}" = 1 ]; then
  for input in ${GLOBAL_INPUTS:-cached}; do
    # GLOBAL_JFR=1: each run under JFR (profile settings), its task samples folded.
    GJVM=""
    [ "${GLOBAL_JFR:-0}" = 1 ] && GJVM="-XX:StartFlightRecording=filename=/tmp/global-$input.jfr,settings=profile"

    case $input in
      cached) bench global-cached "" "$GJVM" --rows 100000000 --reps "${REPS:-3}" --cases global \
        ${GLOBAL_ARGS:-} ;;
      parquet) bench global-parquet "" "$GJVM" --rows 100000000 --reps "${REPS:-3}" \
        --cases global --input parquet ${GLOBAL_ARGS:-} ;;
      string) bench global-string "" "$GJVM" --rows 20000000 --reps "${REPS:-3}" --cases global \
        --key string ${GLOBAL_ARGS:-} ${STRING_ARGS:-} ;;
    esac
    [ "${GLOBAL_JFR:-0}" = 1 ] && fold_samples "/tmp/global-$input.jfr" "$out/samples-global-$input.txt"
  done
fi
if [ "${FILE:-0}" = 1 ]; then
  FJVM=""
  [ "${FILE_JFR:-0}" = 1 ] && FJVM="-XX:StartFlightRecording=filename=/tmp/file.jfr,settings=profile"
  bench file "" "$FJVM" --rows "${FILE_ROWS:-100000000}" --reps "${REPS:-3}" --cases file
  [ "${FILE_JFR:-0}" = 1 ] && fold_samples /tmp/file.jfr "$out/samples-file.txt"
fi
if [ "${CACHE_COLUMNS:-0}" = 1 ]; then
  bench cache-columns "" "" --rows 20000000 --reps "${REPS:-3}" --cases within --key string \
    --variant cache-rows:spark.gpusort.intake.cacheBatches=false
fi
if [ "${COLUMNAR:-0}" = 1 ]; then
  rows="--variant rows:spark.gpusort.intake.columnar=false"
  bench columnar-cached "" "" --rows 100000000 --reps "${REPS:-3}" --cases within $rows
  bench columnar-parquet "" "" --rows 100000000 --reps "${REPS:-3}" --cases within \
    --input parquet $rows
  bench columnar-string "" "" --rows 20000000 --reps "${REPS:-3}" --cases within --key string
fi
if [ "${CONCURRENT:-0}" = 1 ]; then
  # The bound on GPU tasks at once is the process's (the device is opened once): one run each.
  for round in 1 2; do
    for tasks in ${CONC:-2 16}; do
      bench concurrent-$tasks-$round "" "" --rows 100000000 --reps "${REPS:-3}" --cases within \
        --conf spark.gpusort.cuda.concurrentTasks=$tasks
    done
  done
fi
if [ "${FULL:-0}" = 1 ]; then
  bench full-new "" "" --rows 100000000 --reps "${REPS:-3}"
  [ -n "$old_prefix" ] && bench full-old "$old_prefix" "" --rows 100000000 --reps "${REPS:-3}"
fi
if [ "${VARIANTS:-0}" = 1 ]; then
  bench parquet-new "" "" --rows 100000000 --reps 3 --cases within --input parquet
  [ -n "$old_prefix" ] && bench parquet-old "$old_prefix" "" --rows 100000000 --reps 3 \
    --cases within --input parquet
  bench string-new "" "" --rows 20000000 --reps 3 --cases within --key string
  [ -n "$old_prefix" ] && bench string-old "$old_prefix" "" --rows 20000000 --reps 3 \
    --cases within --key string
fi
if [ "${STRING:-0}" = 1 ]; then
  for round in $(seq "${ROUNDS:-2}"); do
    bench string-new-$round "" "" --rows 20000000 --reps 3 --cases within --key string
    [ -n "$old_prefix" ] && bench string-old-$round "$old_prefix" "" --rows 20000000 --reps 3 \
      --cases within --key string
  done
fi
if [ "${FINAL:-0}" = 1 ]; then
  # The page size (chunk.maxBytes) as cases of one run; the GPU-task bound (read once per
  # executor) as runs of their own.
  bench within-pages "" "" --rows 100000000 --reps 3 --cases within \
    --variant chunk=8m:spark.gpusort.chunk.maxBytes=8m \
    --variant chunk=128m:spark.gpusort.chunk.maxBytes=128m
  bench within-tasks8 "" "" --rows 100000000 --reps 3 --cases within \
    --conf spark.gpusort.cuda.concurrentTasks=8
  bash "$host_sh" run -- java -Xmx48g -Dgpusort.test.master='local[16]' \
    org.junit.platform.console.ConsoleLauncher execute --disable-banner --disable-ansi-colors \
    --select-method 'io.gpusort.engine.cuda.CudaEngineExtraTest#sharedEngineGathersRowsOnTheDevice' \
    --select-method 'io.gpusort.sql.CudaRowPathTest#sortMergeJoinSortsPutRowsInOrderOnTheDevice' \
    --select-method 'io.gpusort.sql.CudaRowPathTest#fixedWidthRowsMatchSpark(java.lang.String)' \
    --details tree > "$out/gpu-tests-final.txt" 2>&1
  echo "final gpu tests exit $?"
  grep -E "tests (successful|failed|aborted)|CudaRowPathTest .*(match|join)|✘" \
    "$out/gpu-tests-final.txt"
  bench parquet-tasks8 "" "" --rows 100000000 --reps 3 --cases within --input parquet \
    --conf spark.gpusort.cuda.concurrentTasks=8
  bench string-tasks8 "" "" --rows 20000000 --reps 3 --cases within --key string \
    --conf spark.gpusort.cuda.concurrentTasks=8
  bench within-tasks16 "" "" --rows 100000000 --reps 3 --cases within \
    --conf spark.gpusort.cuda.concurrentTasks=16
fi
exit 0
