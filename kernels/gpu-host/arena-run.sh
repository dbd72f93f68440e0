#!/usr/bin/env bash
# On the GPU host, issue 35's checks and measurements (the page-locked arena, first queries, busy
# sessions, larger data), in parts that fit one device call each. Needs the bundle made with
# --spark, every part staged. Writes logs under $1; prints the tables last.
#
#   bash kernels/gpu-host/arena-run.sh OUTDIR
#
# Environment (1 runs a part, 0 or unset leaves it out):
#   PIN      ArenaBenchmark: the arena (PIN_BYTES, 16g) pinned by 1, 2 and 4 threads, one JVM each
#   TESTS    the GPU-tagged engine tests; the Spark-level suites CI runs on every line (the oracle,
#            SQL extension, metrics, range-sort exchange, spill, cancellation, columnar intake,
#            collations, the row path's warm-up) and the plugin's, with engine auto (cuda there); the small-heap spill
#            suites; the GPU-tagged CudaRowPathTest at ROWPATH_ROWS (2e6) rows a case
#   SUITES   only the Spark-level suites of TESTS (PIN_METHOD: their arena's
#            spark.gpusort.memory.pinned.method, hugepages say; the default unless set)
#   WITHIN   SortBenchmark's within-partition cases over a size series in one JVM (SIZES_WITHIN:
#            1e8,3e8,6e8; Spark's sort only up to BASELINE_MAX, 3e8), cached rows, REPS (3). At
#            6e8 rows give the sorts room (JAVA_OPTS=-Dspark.memory.fraction=0.8, HEAP=100g), or
#            they spill, which is not what the series measures
#   GLOBAL   the global cases the same way (SIZES_GLOBAL: 1e8,3e8), REPS_GLOBAL (2), byKey's sort
#            mode left out
#   FIRST    fresh JVMs, one per case, each case run first in its JVM (--first), 1e8 rows: cached
#            within, global and SQL; Parquet within and global (FIRST_LABELS: a space-separated
#            choice of cached-within cached-global cached-sql parquet-within parquet-global); the
#            first under JFR, its task threads' samples folded by run (FIRST_JFR=0 leaves it out);
#            FIRST_NOWARM=1 adds cached within again with the row path's warm-up off;
#            cached-within-spark and parquet-within-spark (named in FIRST_LABELS only) run
#            Spark's sortWithinPartitions first in a JVM of its own; cached-within-awaited and
#            cached-sql-awaited (named only) have the first run wait for the background warm-ups
#            to end (a diagnostic: what a first run pays beside a warm-up still running);
#            cached-within-scan (named only) runs the scan first: the JVM's first query without a
#            sort, for what any first query pays; cached-within-noplan (named only) has the
#            driver's planning warm-up off (spark.gpusort.warmup.planning=false);
#            FIRST_JFR_LABELS picks the JVMs recorded (cached-within cached-within-nowarmup),
#            whose task samples are split by run (first, rep 1, ...) and deoptimizations listed;
#            FIRST_ARGS: more SortBenchmark arguments (--skip global.mode=sort, say)
#   BUSY     SortBenchmark --session busy (1e8 rows; string keys 2e7): the cases interleaved in one
#            session, then each alone in a JVM of its own, but those whose label holds one of
#            BUSY_SKIP's '|'-separated strings (all nine alone JVMs take more than one call);
#            BUSY_JFR=1 records the busy session's JVM (not its alone JVMs) for JFR_KEEP
#   ALONE    SortBenchmark --session alone: one top-level JVM per busy-session case named in
#            ALONE_CASES ('|'-separated labels), on a host with no other benchmark JVM; ROWS and
#            STRING_ROWS as BUSY, --alone-warmups ALONE_WARMUPS (3), REPS_BUSY timed runs;
#            ALONE_JFR=1 records each JVM and splits its task threads' samples by run
#   ONESHOT  fresh JVMs, one run each: the Parquet -> sort -> Parquet job (1e8 rows; FileSort and
#            Spark's job), then TeraSort 10 GB at an 8g heap (terasort-run.sh)
# JFR_KEEP: a folder the recordings are copied into (named JFR_PREFIX and the label), left
# unanalysed there, to be read elsewhere.
# ENGINE (cuda), MASTER (local[16]), HEAP (-Xmx80g), JAVA_OPTS (more JVM options for every run),
# SETTLE_SECONDS (SortBenchmark's longest wait for the page cache's writes before a run; its own
# default, 60 s, where unset; 0 waits never).
set -uo pipefail
out=$1
mkdir -p "$out"
host_sh=$(ls .gpu-bundle/part-*/host.sh | tail -n 1)
engine=${ENGINE:-cuda}
master=${MASTER:-local[16]}
heap=${HEAP:-80g}
rows=${ROWS:-100000000}
reps=${REPS:-3}
settle=${SETTLE_SECONDS:+-Dgpusort.bench.settleSeconds=$SETTLE_SECONDS}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"
{ nproc; grep -E "MemTotal|MemAvailable" /proc/meminfo; ulimit -l; } | tee -a "$out/gpu.txt"

# $1: label; $2: extra JVM options; rest: SortBenchmark's arguments. Keeps the full log under $out.
bench() {
  local label=$1 jvm=$2
  shift 2
  local start
  start=$(date +%s)
  bash "$host_sh" run -- bash -c "java -Xmx$heap $jvm $settle ${JAVA_OPTS:-} -cp \"\${CLASSPATH}\" \
    io.gpusort.examples.SortBenchmark --engine $engine --master '$master' $*" \
    > "$out/bench-$label.txt" 2>&1
  echo "SortBenchmark $label exit $? after $(( $(date +%s) - start )) s"
}
# The JVM option of a flight recording into $1: the profile's samples, and the JIT's compilations
# (over 10 ms), deoptimizations and class loads.
recording() {
  echo "-XX:StartFlightRecording=filename=$1,settings=profile,+jdk.Compilation#threshold=10ms,+jdk.Deoptimization#enabled=true,+jdk.ClassLoad#enabled=true"
}
# Copies the recording $1 into JFR_KEEP as $2.jfr (after JFR_PREFIX), unread; fails where
# JFR_KEEP is unset, so that the caller reads the recording here instead.
keep_recording() {
  [ -n "${JFR_KEEP:-}" ] || return 1
  cp "$1" "$JFR_KEEP/${JFR_PREFIX:-}$2.jfr"
}
# The benchmark's own tables: every line but Spark's and the JVM's log lines.
tables() {
  grep -vE "^(window|WARN|INFO|NOTE|[0-9]{2}/[0-9]{2}/[0-9]{2}|\s+at |SLF4J|Using Spark)" "$1" \
    | grep -vE "^\s*$" | head -n "${2:-80}"
}
# Folds the task threads' execution samples of a recording into "count frame;frame;..." lines,
# leaf first, 24 frames deep: small enough to bring back.
fold_samples() {  # $1: recording, $2: output
  bash "$host_sh" run -- jfr print --events jdk.ExecutionSample --stack-depth 64 "$1" | awk -v ev=jdk.ExecutionSample -f "$(dirname "$0")/fold-samples.awk" \
    | sort | uniq -c | sort -rn > "$2"
  echo "$2: $(awk '{ s += $1 } END { print s }' "$2") task samples, $(wc -l < "$2") stacks"
}

# The JIT's compilations in a recording: "millis level start method" for each over 20 ms, longest
# first, and how many of them and of the project's own (io.gpusort) there were.
jit_summary() {  # $1: recording, $2: output
  bash "$host_sh" run -- jfr print --events jdk.Compilation "$1" | awk '
    /duration = / { d = $3; if ($4 == "s") d *= 1000; else if ($4 == "us") d /= 1000 }
    /compileLevel = / { level = $3 }
    /startTime = / { t = $3 }
    /method = / { m = $3 }
    /^}/ { if (d >= 20) printf "%.0f %s %s %s\n", d, level, t, m; d = 0 }' | sort -rn > "$2"
  echo "$2: $(wc -l < "$2") compilations over 20 ms ($(awk '{ s += $1 } END { print s + 0 }' "$2") ms), $(grep -c io.gpusort "$2") of them io.gpusort ($(awk '/io.gpusort/ { s += $1 } END { print s + 0 }' "$2") ms)"
  grep io.gpusort "$2" | head -n 12
}

# The task threads' samples (Java and native) of a recording split by SortBenchmark's run windows
# ("window CASE | RUN | ..." lines of its log): "count RUN<TAB>EVENT<TAB>stack" lines into $3; prints
# each run's samples, then for the runs of the case named $4 the 12 frames of ours (io.gpusort,
# the innermost on the stack; the leaf where none is ours) most samples were in.
window_samples() {  # $1: recording, $2: the benchmark's log, $3: output, $4: a case's name
  for event in jdk.ExecutionSample jdk.NativeMethodSample; do
    bash "$host_sh" run -- jfr print --events "$event" --stack-depth 64 "$1" \
      | awk -v ev="$event" -f "$(dirname "$0")/window-samples.awk" "$2" -
  done | sort | uniq -c | sort -k2 -k1,1rn > "$3"
  awk -F'\t' '{ c = $1 + 0; run = $1; sub(/^ *[0-9]+ /, "", run); total[run "\t" $2] += c }
    END { for (r in total) print total[r] "\t" r }' "$3" | sort -t$'\t' -k2
  awk -F'\t' -v want="$4" '{ c = $1 + 0; run = $1; sub(/^ *[0-9]+ /, "", run)
      if (index(run, want) == 0) next
      n = split($3, f, ";"); at = f[1]
      for (i = 1; i <= n; i++) if (f[i] ~ /^io[.]gpusort[.]/) { at = f[i]; break }
      frame[run "\t" $2 "\t" at] += c }
    END { for (l in frame) print frame[l] "\t" l }' "$3" | sort -t$'\t' -k2,3 -k1,1rn \
    | awk -F'\t' '{ key = $2 "\t" $3; if (++seen[key] <= 12) print }'
}

# The driver's threads' samples (main, the DAG scheduler) of a recording within the first run of
# the case named $3: its 40 most sampled stacks, cut at their first frame of Spark's or ours (the
# leaf where there is none), into $4. The first run's time before its tasks start is the driver's.
driver_samples() {  # $1: recording, $2: the benchmark's log, $3: a case's name, $4: output
  for event in jdk.ExecutionSample jdk.NativeMethodSample; do
    bash "$host_sh" run -- jfr print --events "$event" --stack-depth 64 "$1" \
      | awk -v ev="$event" -v threads='"main"|dag-scheduler' \
        -f "$(dirname "$0")/window-samples.awk" "$2" -
  done | awk -F'\t' -v want="$3 | first" '$1 == want {
      n = split($3, f, ";"); at = f[2]
      for (i = 2; i <= n; i++) if (f[i] ~ /^(org[.]apache[.]spark|io[.]gpusort)/) {
        at = f[i]; break }
      print f[1] "\t" $2 "\t" at }' | sort | uniq -c | sort -rn > "$4"
  echo "$4: $(awk '{ s += $1 } END { print s + 0 }' "$4") driver samples in $3's first run"
  head -n 40 "$4"
}

# The JIT's deoptimizations of the project's methods in a recording: "time method reason action"
# lines, and how many there were in all.
deopt_summary() {  # $1: recording, $2: output
  bash "$host_sh" run -- jfr print --events jdk.Deoptimization "$1" | awk '
    /startTime = / { t = $3 }
    /method = / { m = $3 }
    /reason = / { r = $3 }
    /action = / { a = $3 }
    /^}/ { print t, m, r, a }' > "$2"
  echo "$2: $(wc -l < "$2") deoptimizations, $(grep -c io.gpusort "$2") of io.gpusort methods"
  grep io.gpusort "$2" | awk '{ print $2, $3 }' | sort | uniq -c | sort -rn | head -n 15
}

# The classes a recording saw loaded: "time<TAB>thread<TAB>class<TAB>millis" a line (task threads
# named "task"), and how many the task threads loaded within each run of the benchmark's log.
class_summary() {  # $1: recording, $2: the benchmark's log, $3: output
  bash "$host_sh" run -- jfr print --events jdk.ClassLoad "$1" | awk '
    /startTime = / { t = $3 }
    /duration = / { d = $3; if ($4 == "s") d *= 1000; else if ($4 == "us") d /= 1000
      else if ($4 == "ns") d /= 1e6 }
    /loadedClass = / { c = $3 }
    /eventThread = / { th = $0; sub(/^[^"]*"/, "", th); sub(/".*/, "", th)
      if (th ~ /^Executor task launch/) th = "task" }
    /^}/ { printf "%s\t%s\t%s\t%.3f\n", t, th, c, d }' > "$3"
  awk -F'\t' 'FNR == NR { if ($1 == "window") { n++; w = substr($0, 8); sub(/ \| from.*/, "", w)
      name[n] = w; from[n] = $(NF - 2); to[n] = $NF }; next }
    $2 == "task" { for (i = 1; i <= n; i++) if ($1 >= from[i] && $1 <= to[i]) {
      k[i]++; ms[i] += $4 } }
    END { for (i = 1; i <= n; i++) if (k[i]) printf "classes loaded by tasks | %s | %d, %.0f ms\n",
      name[i], k[i], ms[i] }' FS=' ' "$2" FS='\t' "$3"
}

if [ "${PIN:-0}" = 1 ]; then
  for t in 1 2 4; do
    bash "$host_sh" run -- bash -c "java -Xmx8g -cp \"\${CLASSPATH}\" \
      io.gpusort.examples.ArenaBenchmark --bytes ${PIN_BYTES:-16g} --threads $t" \
      > "$out/pin-$t.txt" 2>&1
    echo "ArenaBenchmark threads $t exit $?"
    grep -E "^(engine opened|arena|plain)" "$out/pin-$t.txt"
  done
fi

if [ "${TESTS:-0}" = 1 ] || [ "${SUITES:-0}" = 1 ]; then
  if [ "${TESTS:-0}" = 1 ]; then
  start=$(date +%s)
  bash "$host_sh" run -- java -Xmx32g -Dgpusort.memory.trackLeaks=true ${PIN_METHOD:+-Dgpusort.test.pinMethod=$PIN_METHOD} \
    org.junit.platform.console.ConsoleLauncher execute --disable-banner --disable-ansi-colors \
    --select-package io.gpusort.engine --include-tag gpu --details tree \
    > "$out/gpu-engine-tests.txt" 2>&1
  echo "GPU engine tests exit $? ($(( $(date +%s) - start )) s)"
  grep -E "tests (successful|failed|aborted|skipped)" "$out/gpu-engine-tests.txt"
  grep -E "✘" "$out/gpu-engine-tests.txt" | head -20
  fi
  selected=()
  for c in GpuSortOracleTest SqlExtensionTest GpuSortMetricsTest RangeSortExchangeTest SpillTest \
      CancellationTest ColumnarIntakeTest CollationKeysTest RowPathWarmupTest; do
    selected+=(--select-class "io.gpusort.sql.$c")
  done
  selected+=(--select-class io.gpusort.spark.GpuSortPluginTest)
  start=$(date +%s)
  bash "$host_sh" run -- java -Xmx48g -Dgpusort.memory.trackLeaks=true ${PIN_METHOD:+-Dgpusort.test.pinMethod=$PIN_METHOD} \
    -Dgpusort.test.master='local[16]' org.junit.platform.console.ConsoleLauncher execute \
    --disable-banner --disable-ansi-colors "${selected[@]}" --exclude-tag small-heap \
    --details tree > "$out/spark-suites.txt" 2>&1
  echo "Spark-level suites exit $? ($(( $(date +%s) - start )) s)"
  grep -E "spark-gpusort tests: engine" "$out/spark-suites.txt" | sort | uniq -c
  grep -E "tests (successful|failed|aborted|skipped)" "$out/spark-suites.txt"
  grep -E "✘" "$out/spark-suites.txt" | head -20
  if [ "${TESTS:-0}" = 1 ]; then
  start=$(date +%s)
  bash "$host_sh" run -- java -Xmx512m -Dgpusort.memory.trackLeaks=true ${PIN_METHOD:+-Dgpusort.test.pinMethod=$PIN_METHOD} \
    org.junit.platform.console.ConsoleLauncher execute --disable-banner --disable-ansi-colors \
    --select-class io.gpusort.sql.LargePartitionSpillTest \
    --select-class io.gpusort.sql.OffHeapSpillTest --include-tag small-heap --details tree \
    > "$out/small-heap.txt" 2>&1
  echo "small-heap suites exit $? ($(( $(date +%s) - start )) s)"
  grep -E "spark-gpusort tests: engine" "$out/small-heap.txt" | sort | uniq -c
  grep -E "tests (successful|failed|aborted|skipped)" "$out/small-heap.txt"
  grep -E "✘" "$out/small-heap.txt" | head -10
  start=$(date +%s)
  bash "$host_sh" run -- java -Xmx48g -Dgpusort.memory.trackLeaks=true ${PIN_METHOD:+-Dgpusort.test.pinMethod=$PIN_METHOD} \
    -Dgpusort.test.master='local[16]' -Dgpusort.test.gpuRows="${ROWPATH_ROWS:-2000000}" \
    org.junit.platform.console.ConsoleLauncher execute --disable-banner --disable-ansi-colors \
    --select-class io.gpusort.sql.CudaRowPathTest --include-tag gpu --details tree \
    > "$out/rowpath.txt" 2>&1
  echo "CudaRowPathTest exit $? ($(( $(date +%s) - start )) s)"
  grep -E "tests (successful|failed|aborted|skipped)|CudaRowPathTest .*match" "$out/rowpath.txt"
  grep -E "✘" "$out/rowpath.txt" | head -10
  fi
fi

if [ "${WITHIN:-0}" = 1 ]; then
  bench within "" --cases within --rows "${SIZES_WITHIN:-1e8,3e8,6e8}" --reps "$reps" \
    --baseline-max-rows "${BASELINE_MAX:-300000000}"
  tables "$out/bench-within.txt" 120
fi
if [ "${GLOBAL:-0}" = 1 ]; then
  bench global "" --cases global --rows "${SIZES_GLOBAL:-1e8,3e8}" --reps "${REPS_GLOBAL:-2}" \
    --skip global.mode=sort --baseline-max-rows "${BASELINE_MAX:-300000000}"
  tables "$out/bench-global.txt" 120
fi

if [ "${FIRST:-0}" = 1 ]; then
  # label|cases|input|the case run first
  for spec in "cached-within|within|cached|GpuSort.withinPartitions" \
      "cached-global|global|cached|GpuSort.byKey, global.mode=merge" \
      "cached-sql|global|cached|SQL ORDER BY" \
      "parquet-within|within|parquet|GpuSort.withinPartitions" \
      "parquet-global|global|parquet|GpuSort.byKey, global.mode=merge" \
      "cached-within-nowarmup|within|cached|GpuSort.withinPartitions" \
      "cached-within-noplan|within|cached|GpuSort.withinPartitions" \
      "cached-within-awaited|within|cached|GpuSort.withinPartitions" \
      "cached-within-scan|within|cached|scan (no sort)" \
      "cached-sql-awaited|global|cached|SQL ORDER BY" \
      "cached-within-spark|within|cached|Dataset.sortWithinPartitions" \
      "parquet-within-spark|within|parquet|Dataset.sortWithinPartitions"; do
    IFS='|' read -r label cases input first <<< "$spec"
    if [ "$label" = cached-within-nowarmup ]; then
      [ "${FIRST_NOWARM:-0}" = 1 ] || continue
    elif [[ "$label" == *-spark || "$label" == *-awaited || "$label" == *-scan \
        || "$label" == *-noplan ]]; then
      # Named only: Spark's sort run first in a JVM of its own (its first run as a user's first
      # query meets it, for the first ratio of the GpuSort JVM of the same input), a first run
      # that waits for the warm-ups, or the scan first
      [[ " ${FIRST_LABELS:-} " == *" $label "* ]] || continue
    elif [ -n "${FIRST_LABELS:-}" ] && [[ " $FIRST_LABELS " != *" $label "* ]]; then
      continue
    fi
    jvm=""
    [ "$label" = cached-within-nowarmup ] && jvm="-Dspark.gpusort.warmup.rowPath=false"
    [[ "$label" == *-awaited ]] && jvm="-Dgpusort.bench.awaitWarmups=true"
    [[ "$label" == *-noplan ]] && jvm="-Dspark.gpusort.warmup.planning=false"
    if [ "${FIRST_JFR:-1}" = 1 ] && [[ " ${FIRST_JFR_LABELS:-cached-within cached-within-nowarmup} " == *" $label "* ]]; then
      jvm="$jvm $(recording "/tmp/$label.jfr")"
    fi
    rm -f "/tmp/$label.jfr"
    bench "first-$label" "$jvm" --cases "$cases" --input "$input" --rows "$rows" \
      --reps "${REPS_FIRST:-2}" --first "\"$first\"" ${FIRST_ARGS:-}
    tables "$out/bench-first-$label.txt" 90
    [ -f "/tmp/$label.jfr" ] || continue
    keep_recording "/tmp/$label.jfr" "$label" && continue
    window_samples "/tmp/$label.jfr" "$out/bench-first-$label.txt" \
      "$out/first-windows-$label.txt" "${first%%,*}"
    jit_summary "/tmp/$label.jfr" "$out/first-jit-$label.txt"
    deopt_summary "/tmp/$label.jfr" "$out/first-deopt-$label.txt"
    class_summary "/tmp/$label.jfr" "$out/bench-first-$label.txt" "$out/first-classes-$label.txt"
    driver_samples "/tmp/$label.jfr" "$out/bench-first-$label.txt" "${first%%,*}" \
      "$out/first-driver-$label.txt"
  done
fi

if [ "${BUSY:-0}" = 1 ]; then
  skips=""
  if [ -n "${BUSY_SKIP:-}" ]; then
    IFS='|' read -ra skip_labels <<< "$BUSY_SKIP"
    for l in "${skip_labels[@]}"; do skips="$skips --skip \"$l\""; done
  fi
  jvm=""
  [ "${BUSY_JFR:-0}" = 1 ] && jvm=$(recording /tmp/busy.jfr)
  rm -f /tmp/busy.jfr
  bench busy "$jvm" --session busy --rows "$rows" --string-rows "${STRING_ROWS:-20000000}" \
    --reps "${REPS_BUSY:-3}" $skips
  tables "$out/bench-busy.txt" 80
  [ -f /tmp/busy.jfr ] && keep_recording /tmp/busy.jfr busy
fi

if [ "${ALONE:-0}" = 1 ]; then
  IFS='|' read -ra alone_labels <<< "${ALONE_CASES:?ALONE needs ALONE_CASES}"
  n=0
  for label in "${alone_labels[@]}"; do
    n=$((n + 1))
    jvm=""
    if [ "${ALONE_JFR:-0}" = 1 ]; then
      jvm=$(recording "/tmp/alone-$n.jfr")
    fi
    rm -f "/tmp/alone-$n.jfr"
    grep -E "MemAvailable|^Cached|Dirty" /proc/meminfo > "$out/alone-$n-meminfo.txt"
    bench "alone-$n" "$jvm" --session alone --alone-case "\"$label\"" --rows "$rows" \
      --string-rows "${STRING_ROWS:-20000000}" --reps "${REPS_BUSY:-3}" \
      --alone-warmups "${ALONE_WARMUPS:-3}"
    grep -E "^ALONE|host arena|background" "$out/bench-alone-$n.txt"
    [ -f "/tmp/alone-$n.jfr" ] || continue
    keep_recording "/tmp/alone-$n.jfr" "alone-$n" && continue
    window_samples "/tmp/alone-$n.jfr" "$out/bench-alone-$n.txt" "$out/alone-windows-$n.txt" \
      "$label"
    jit_summary "/tmp/alone-$n.jfr" "$out/alone-jit-$n.txt"
    deopt_summary "/tmp/alone-$n.jfr" "$out/alone-deopt-$n.txt"
  done
fi

if [ "${ONESHOT:-0}" = 1 ]; then
  # One timed run after the first: the "first s" column is the one-shot figure.
  bench oneshot-file "" --cases file --rows "$rows" --reps 1
  tables "$out/bench-oneshot-file.txt" 40
  HEAP=8g REPS=1 WARMUPS=0 bash kernels/gpu-host/terasort-run.sh "$out/terasort"
fi
true
