#!/usr/bin/env bash
# On the GPU host, issue 36's checks on cuda: the Spark-level tests of its defects (NaN bits,
# Parquet dictionaries with nulls off heap, peak execution memory in task metrics, the plugin's
# failures naming their setting), then the differential suite's trials, seeds SEED (3600000) to
# SEED + TRIALS - 1 (2000), each trial printed as it ends so that a run cut short still counts.
# Needs the bundle made with --spark, every part staged. Writes logs under $1.
#
#   SEED=3600000 TRIALS=2000 DIFF_S=500 bash kernels/gpu-host/diff-run.sh OUTDIR
#
# TESTS=0 leaves the tests out; DIFF_S bounds the trials' JVM in seconds (500); MASTER (local[16]).
set -uo pipefail
out=$1
mkdir -p "$out"
host_sh=$(ls .gpu-bundle/part-*/host.sh | tail -n 1)
master=${MASTER:-local[16]}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"

if [ "${TESTS:-1}" = 1 ]; then
  start=$(date +%s)
  bash "$host_sh" run -- java -Xmx24g -Dgpusort.memory.trackLeaks=true \
    -Dgpusort.test.master="$master" org.junit.platform.console.ConsoleLauncher execute \
    --disable-banner --disable-ansi-colors --select-class io.gpusort.sql.NanBitsTest \
    --select-class io.gpusort.sql.OffHeapParquetIntakeTest \
    --select-class io.gpusort.sql.PeakExecutionMemoryTest \
    --select-class io.gpusort.sql.SortFailuresTest --details tree > "$out/tests.txt" 2>&1
  echo "issue 36 tests exit $? ($(( $(date +%s) - start )) s)"
  grep -E "spark-gpusort tests: engine" "$out/tests.txt" | sort | uniq -c
  grep -E "tests (successful|failed|aborted|skipped)" "$out/tests.txt"
  grep -E "✘" "$out/tests.txt" | head -20
fi

seed=${SEED:-3600000}
start=$(date +%s)
timeout "${DIFF_S:-500}" bash "$host_sh" run -- java -Xmx24g -Dgpusort.test.master="$master" \
  -Dgpusort.diff.seed="$seed" -Dgpusort.diff.trials="${TRIALS:-2000}" \
  -Dgpusort.diff.verbose=true io.gpusort.sql.diff.DifferentialRun > "$out/diff.txt" 2>&1
echo "differential run exit $? ($(( $(date +%s) - start )) s), from seed $seed"
echo "trials ended: $(grep -c 'plugin nodes on' "$out/diff.txt")," \
  "differences: $(grep -c '^DIFFERENCE' "$out/diff.txt")"
grep -A2 '^DIFFERENCE' "$out/diff.txt" | head -40
# The report, where the run ended by itself (a run cut short prints none)
sed -n '/^differential run: /,$p' "$out/diff.txt" | head -40
