#!/usr/bin/env bash
# Runs on the GPU host: the Spark-level suites, with engine auto (cuda there), and the GPU-tagged
# Spark-level CudaRowPathTest, on the bundle of one Spark line (bundle.sh --spark --out DIR -P...).
#
#   kernels/gpu-host/lines-run.sh BUNDLE_DIR OUTDIR
#
# The suites are the ones CI runs on every line (-Pspark-suites): the oracle against orderBy, the
# SQL extension with EXPLAIN, metrics, the range-sort exchange, spilling, cancellation, columnar
# intake, collations. Each bundle stages under a root of its own (GPU_HOST_ROOT), so that two
# lines' bundles can be held at once. ROWS: CudaRowPathTest's rows per key type (1e7; its 80-odd
# cases take over 8 minutes at that size on the H200); ROWPATH=0 leaves it out; SUITES replaces
# the suites' selection (launcher options, such as --select-method io.gpusort.sql.X#m).
set -uo pipefail
bundle=$1
out=$2
name=$(basename "$bundle")
host_sh=$(ls "$bundle"/part-*/host.sh | tail -n 1)
export GPU_HOST_ROOT=/tmp/gpu-host-$name
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"
selected=()
for c in GpuSortOracleTest SqlExtensionTest GpuSortMetricsTest RangeSortExchangeTest SpillTest \
    CancellationTest ColumnarIntakeTest CollationKeysTest; do
  selected+=(--select-class "io.gpusort.sql.$c")
done
[ -n "${SUITES:-}" ] && selected=($SUITES)
start=$(date +%s)
bash "$host_sh" run -- java -Xmx48g -Dgpusort.memory.trackLeaks=true \
  -Dgpusort.test.master='local[16]' org.junit.platform.console.ConsoleLauncher execute \
  --disable-banner --disable-ansi-colors "${selected[@]}" --details tree \
  > "$out/$name-spark-suites.txt" 2>&1
echo "$name Spark-level suites exit $? ($(( $(date +%s) - start )) s)"
grep -E "spark-gpusort tests: engine" "$out/$name-spark-suites.txt" | sort | uniq -c
grep -E "tests (successful|failed|aborted|skipped)" "$out/$name-spark-suites.txt"
grep -E "✘" "$out/$name-spark-suites.txt" | head -20
[ "${ROWPATH:-1}" = 1 ] || exit 0
start=$(date +%s)
bash "$host_sh" run -- java -Xmx48g -Dgpusort.memory.trackLeaks=true \
  -Dgpusort.test.master='local[16]' -Dgpusort.test.gpuRows="${ROWS:-10000000}" \
  org.junit.platform.console.ConsoleLauncher execute --disable-banner --disable-ansi-colors \
  --select-class io.gpusort.sql.CudaRowPathTest --include-tag gpu --details tree \
  > "$out/$name-rowpath.txt" 2>&1
echo "$name CudaRowPathTest exit $? ($(( $(date +%s) - start )) s)"
grep -E "tests (successful|failed|aborted|skipped)|CudaRowPathTest .*match" "$out/$name-rowpath.txt"
grep -E "✘" "$out/$name-rowpath.txt" | head -20
true
