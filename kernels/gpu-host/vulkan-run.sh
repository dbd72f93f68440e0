#!/usr/bin/env bash
# On the GPU host, one call: the Vulkan engine's tests on NVIDIA's Vulkan driver, then CUB and the
# CUDA kernels (kernels/bench/sort_bench) and the Vulkan engine (VulkanBenchmark, CUB's times of
# the same run as its baselines) on the same sizes. Needs the Vulkan loader carried in .gl/ (see
# README.md) and .gpu-bundle/part-1. Writes logs under $1. VulkanBenchmark warms the GPU up before
# each timed sort (--warmup-keys, 4e9 by default on hardware).
set -uo pipefail
out=$1
# Any part's host.sh runs the bundle once every part is staged (part-1 alone without Spark).
host_sh=$(ls .gpu-bundle/part-*/host.sh | head -n 1)
sizes=${SIZES:-1e7,1e8}
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
# NVIDIA's ICD manifest: where the device README says, else wherever the driver put one.
icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
[ -f "$icd" ] || icd=$(find / -xdev \( -path /proc -o -path /sys \) -prune -o -name 'nvidia_icd*.json' -print 2>/dev/null | head -n 1)
if [ -n "$icd" ] && [ -f "$icd" ]; then
  export VK_DRIVER_FILES=$icd VK_ICD_FILENAMES=$icd
  echo "Vulkan ICD: $icd ($(grep -o '"library_path"[^,]*' "$icd"))"
elif ldconfig -p | grep -q 'libGLX_nvidia\.so\.0'; then
  # The driver's Vulkan ICD lives in libGLX_nvidia; a manifest naming it is all the loader needs.
  printf '{"file_format_version":"1.0.0","ICD":{"library_path":"libGLX_nvidia.so.0","api_version":"1.3.0"}}\n' > /tmp/nvidia_icd.json
  export VK_DRIVER_FILES=/tmp/nvidia_icd.json VK_ICD_FILENAMES=/tmp/nvidia_icd.json
  echo "Vulkan ICD: written for libGLX_nvidia.so.0"
else
  echo "no NVIDIA Vulkan ICD manifest or libGLX_nvidia found:"; ldconfig -p | grep -i nvidia | head
fi
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"
# The SM clock through the run: NVIDIA keeps a Vulkan device that works in bursts at its idle clock.
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,utilization.gpu --format=csv -lms 200 \
  > "$out/clocks.txt" 2>&1 &
clocks=$!
trap 'kill $clocks 2>/dev/null' EXIT
export VK_LOADER_DEBUG=${VK_LOADER_DEBUG:-error}
(cd kernels/bench && nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/sb sort_bench.cu) > "$out/build.txt" 2>&1 &
build=$!
bash "$host_sh" run -- java -Xmx32g org.junit.platform.console.ConsoleLauncher \
  execute --disable-banner --disable-ansi-colors --select-package io.gpusort.engine.vulkan \
  --include-tag vulkan --reports-dir "$out/junit" --details tree > "$out/vulkan-tests.txt" 2>&1
echo "vulkan tests exit $?"
grep -E "tests (successful|failed|aborted|skipped)|run on" "$out/vulkan-tests.txt"
# The build only: a bare wait would also wait for the clock sampler, which never ends.
wait $build
/tmp/sb --sizes "$sizes" --reps 5 --skip-sweep --no-oddeven > "$out/bench.txt" 2>&1
echo "sort_bench exit $?"
# CUB's medians of this run: | u32 | random | <n> | cub | <ms> | ...
baselines=$(awk -F'|' '$5 ~ /^ *cub *$/ && $3 ~ /random/ {
    gsub(/ /, "", $2); gsub(/ /, "", $4); gsub(/ /, "", $6);
    printf "%s%s-pairs@%s=%s", sep, $2, $4, $6; sep = "," }' "$out/bench.txt")
echo "CUB baselines: $baselines"
sed -n '/^| keys/,$p' "$out/bench.txt" | grep -E "random" | grep -vE "40-bit" | cut -c1-120
bash "$host_sh" run -- java -Xmx64g ${BENCH_JAVA_OPTS:-} io.gpusort.examples.VulkanBenchmark \
  --sizes "$sizes" --reps ${REPS:-5} --baseline "$baselines" > "$out/vulkan-benchmark.txt" 2>&1
echo "vulkan benchmark exit $?"

cat "$out/vulkan-benchmark.txt" | grep -vE "^NOTE|^\[" | tail -12
