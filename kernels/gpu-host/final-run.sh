#!/usr/bin/env bash
# On the GPU host, one call: the GPU-tagged engine tests (1e9 rows included), the engine benchmark
# against Arrays.parallelSort, the odd-even selftest and the CUB harness. Writes logs under $1.
set -uo pipefail
out=$1
# Any part's host.sh runs the bundle once every part is staged (part-1 alone without Spark).
host_sh=$(ls .gpu-bundle/part-*/host.sh | head -n 1)
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"
(cd kernels/bench && nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/sb sort_bench.cu \
  && nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/st oddeven_selftest.cu) > "$out/build.txt" 2>&1 &
bash "$host_sh" run -- java -Xmx32g -Dgpusort.test.largeRows=1000000000 \
  org.junit.platform.console.ConsoleLauncher execute --disable-banner --select-package io.gpusort.engine \
  --include-tag gpu --reports-dir "$out/junit" --details summary > "$out/gpu-tests.txt" 2>&1
echo "gpu tests exit $?"; grep -E "tests (successful|failed|aborted|skipped)|rows sorted" "$out/gpu-tests.txt"
bash "$host_sh" run -- java -Xmx64g io.gpusort.examples.EngineBenchmark --engine cuda \
  --algorithm radix,oddeven --sizes 1e7,1e8 --bits 64,40,32 --reps 5 > "$out/engine-benchmark.txt" 2>&1
echo "benchmark exit $?"; grep -vE "^NOTE" "$out/engine-benchmark.txt" | tail -16
wait
/tmp/st --no-perf > "$out/selftest.txt" 2>&1; echo "selftest exit $?"; tail -1 "$out/selftest.txt"
/tmp/sb --sizes ${SIZES:-1e4,1e6,1e9} --reps 5 > "$out/bench.txt" 2>&1; echo "bench exit $?"
grep -E "MISMATCH|sweep|CHECKS" "$out/bench.txt" | head -5
sed -n '/^| keys/,$p' "$out/bench.txt" | grep -E "oddeven|\| 10000 \||\| 1000000 \|" | cut -c1-110
