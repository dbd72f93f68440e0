#!/usr/bin/env bash
# On the GPU host: builds sort_bench once per tuning variant (in parallel) and runs each, the first
# with the correctness sweep (every one with SWEEP_ALL=1). BENCH_ARGS go to every run.
# Usage: run-variants.sh OUTDIR SIZES "name:flags" ...
set -uo pipefail
out=$1; sizes=$2; shift 2
cd "$(dirname "$0")"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee "$out/gpu.txt"
names=()
for v in "$@"; do
  name=${v%%:*}; flags=${v#*:}
  names+=("$name")
  ( nvcc -O3 -std=c++17 -arch=sm_90 $flags -o "/tmp/sb_$name" sort_bench.cu > "$out/build_$name.txt" 2>&1 \
      || echo "BUILD FAILED $name" ) &
done
wait
first=1
for name in "${names[@]}"; do
  [ -x "/tmp/sb_$name" ] || { echo "== $name: no binary"; cat "$out/build_$name.txt"; continue; }
  extra=--skip-sweep; [ $first = 1 ] || [ -n "${SWEEP_ALL:-}" ] && extra=; first=0
  echo "== variant $name"
  /tmp/sb_$name --sizes "$sizes" $extra ${BENCH_ARGS:-} > "$out/run_$name.txt" 2>&1
  echo "exit $?"
  grep -E "MISMATCH|sweep|FAIL|error|failed" "$out/run_$name.txt" | head -20
  sed -n '/^| keys/,$p' "$out/run_$name.txt" | grep -v "^| ---" | awk -F'|' '{printf "%s|%s|%s|%s|%s|%s|%s\n",$2,$3,$4,$5,$6,$8,$9}'
done
