#!/usr/bin/env bash
# On the GPU host, one call for the row path's memory work (issue 14): the GPU-tagged engine tests,
# SortBenchmark (data cached, nothing spills) on the bundle's classes and, when OLD names a folder
# of an earlier build's class folders (core/, examples/), on those too in the same call, then
# SpillBenchmark with the executor's memory capped so that every sort spills. Needs the bundle
# made with --spark, every part staged. Writes logs under $1.
#
#   bash kernels/gpu-host/spill-run.sh OUTDIR
#
# Environment: ENGINE (cuda), ROWS and REPS of SortBenchmark (1e8, 3), SPILL_ROWS, SPILL_PAD and
# SPILL_HEAP of SpillBenchmark (6e7 rows of 100 bytes of padding under -Xmx6g), MASTER
# (local[16]), OLD (a folder with core/ and examples/ class folders of the build to compare),
# GPU_TESTS, SORT and SPILL (1 runs that part; 0 leaves it out, to split the work over calls).
set -uo pipefail
out=$1
host_sh=$(ls .gpu-bundle/part-*/host.sh | tail -n 1)
engine=${ENGINE:-cuda}
master=${MASTER:-local[16]}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"
nproc | tee -a "$out/gpu.txt"
if [ "${GPU_TESTS:-1}" = 1 ]; then
  bash "$host_sh" run -- java -Xmx32g org.junit.platform.console.ConsoleLauncher execute \
    --disable-banner --select-package io.gpusort.engine --include-tag gpu \
    --reports-dir "$out/junit" --details summary > "$out/gpu-tests.txt" 2>&1
  echo "gpu tests exit $?"; grep -E "tests (successful|failed|aborted|skipped)" "$out/gpu-tests.txt"
fi
sort_bench() {  # $1: label, $2: classpath prefix (empty for the bundle's classes)
  bash "$host_sh" run -- bash -c "java -Xmx80g -cp \"$2\${CLASSPATH}\" \
    io.gpusort.examples.SortBenchmark --engine $engine --rows ${ROWS:-100000000} \
    --reps ${REPS:-3} --master '$master'" > "$out/sort-benchmark-$1.txt" 2>&1
  echo "SortBenchmark ($1) exit $?"; grep -E "^(case|Dataset|GpuSort|SortBenchmark)" "$out/sort-benchmark-$1.txt"
}
if [ "${SORT:-1}" = 1 ]; then
  sort_bench new ""
fi
if [ -n "${OLD:-}" ]; then
  sort_bench old "$OLD/core:$OLD/examples:"
fi
if [ "${SPILL:-1}" = 1 ]; then
  bash "$host_sh" run -- java -Xmx${SPILL_HEAP:-6g} io.gpusort.examples.SpillBenchmark \
    --engine "$engine" --rows ${SPILL_ROWS:-60000000} --pad ${SPILL_PAD:-100} \
    --master "$master" --reps ${SPILL_REPS:-1} --warmups 1 > "$out/spill-benchmark.txt" 2>&1
  echo "SpillBenchmark exit $?"; grep -vE "^[0-9:]+ WARN" "$out/spill-benchmark.txt" | tail -12
fi
