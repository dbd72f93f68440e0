#!/usr/bin/env bash
# GPU discovery script for Spark's resource scheduling:
#   spark.executor.resource.gpu.discoveryScript=/path/to/gpu-discovery.sh
#   spark.worker.resource.gpu.discoveryScript=/path/to/gpu-discovery.sh   (standalone workers)
# Prints the GPUs of this host as Spark expects, e.g. {"name": "gpu", "addresses": ["0", "1"]}:
# the CUDA ordinals nvidia-smi lists (honouring CUDA_VISIBLE_DEVICES when it holds ordinals).
# Where there is no NVIDIA driver, or nvidia-smi fails, it prints an empty list and exits 0, so
# an executor without a GPU starts and spark-gpusort sorts there on another engine.
set -u
addresses=()
if command -v nvidia-smi >/dev/null 2>&1; then
  if indices=$(nvidia-smi --query-gpu=index --format=csv,noheader 2>/dev/null); then
    while IFS= read -r line; do
      line=${line//[[:space:]]/}
      [[ $line =~ ^[0-9]+$ ]] && addresses+=("$line")
    done <<< "$indices"
  fi
fi
# CUDA_VISIBLE_DEVICES of ordinals: keep those, renumbered as CUDA will see them (0, 1, ...).
if [ -n "${CUDA_VISIBLE_DEVICES:-}" ] && [[ $CUDA_VISIBLE_DEVICES =~ ^[0-9]+(,[0-9]+)*$ ]]; then
  visible=()
  IFS=, read -r -a wanted <<< "$CUDA_VISIBLE_DEVICES"
  for w in "${wanted[@]}"; do
    for a in "${addresses[@]}"; do
      [ "$a" = "$w" ] && visible+=("${#visible[@]}")
    done
  done
  addresses=("${visible[@]}")
fi
json=""
for a in "${addresses[@]}"; do
  json+="${json:+, }\"$a\""
done
printf '{"name": "gpu", "addresses": [%s]}\n' "$json"
