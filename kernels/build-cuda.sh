#!/usr/bin/env bash
# Builds every kernels/cuda/*.cu into the fatbin the kernels jar packages:
#   src/main/resources/io/gpusort/kernels/cuda/<name>.fatbin   (cubin sm_80 + sm_90, PTX compute_90)
#   src/main/resources/io/gpusort/kernels/cuda/BUILD-INFO      (nvcc and host compiler versions,
#                                                               flags, SHA-256 of every source)
# The binaries are committed: Maven packages them as they are, so a machine without nvcc builds the
# project. KernelBinariesTest checks that they match the sources and, where the same nvcc is
# installed, rebuilds them and compares bytes.
#
#   kernels/build-cuda.sh           rebuild and replace the committed binaries
#   kernels/build-cuda.sh --check   rebuild into a temporary folder and compare; exit 1 listing
#                                   every difference, 0 if none
#
# NVCC (default: nvcc on PATH) selects the compiler.
#
# Reproducibility: nvcc writes the source path as given on its command line into the fatbin, and
# cicc derives the names of anonymous-namespace symbols from the absolute source path. So nvcc
# always runs in kernels/ on "cuda/<name>.cu", and cicc is told that same relative path as the
# absolute one (-Xcicc --orig_src_path_name=...): the bytes then depend on neither the checkout's
# location nor the output path.
set -euo pipefail

kernels=$(cd "$(dirname "$0")" && pwd)
resources="$kernels/src/main/resources/io/gpusort/kernels/cuda"
nvcc=${NVCC:-nvcc}
# <name> stands for the kernel's name; KernelBinariesTest reads this line back from BUILD-INFO.
FLAGS='-fatbin -O3 -std=c++17 -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90 -Xcicc --orig_src_path_name=cuda/<name>.cu'

check=0
case "${1:-}" in
  "") ;;
  --check) check=1 ;;
  -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
  *) echo "unknown argument: $1 (use --check or nothing)" >&2; exit 2 ;;
esac

command -v "$nvcc" >/dev/null 2>&1 || { echo "nvcc not found (install CUDA 13 or set NVCC)" >&2; exit 2; }
nvcc_version=$("$nvcc" --version | grep '^Cuda compilation tools')
host_compiler=$(gcc --version | sed -n 1p)

# Writes OUT_DIR/<name>.fatbin for every source and OUT_DIR/BUILD-INFO.
build_into() {
  local out_dir=$1 src name
  mkdir -p "$out_dir"
  shopt -s nullglob
  local sources=("$kernels"/cuda/*.cu)
  for src in "${sources[@]}"; do
    name=$(basename "$src" .cu)
    echo "nvcc cuda/$name.cu" >&2
    # shellcheck disable=SC2086  # FLAGS is a space-separated list by design
    (cd "$kernels" && "$nvcc" ${FLAGS//<name>/$name} -o "$out_dir/$name.fatbin" "cuda/$name.cu")
  done
  {
    echo "# Written by kernels/build-cuda.sh; do not edit. Each <name>.fatbin here is, run in kernels/:"
    echo "#   nvcc <flags, with <name> replaced> -o <name>.fatbin cuda/<name>.cu"
    echo "nvcc: $nvcc_version"
    echo "host-compiler: $host_compiler"
    echo "flags: $FLAGS"
    (cd "$kernels" && for f in cuda/*; do [ -f "$f" ] && echo "source: $f $(sha256sum "$f" | cut -d' ' -f1)"; done)
  } > "$out_dir/BUILD-INFO"
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
build_into "$tmp/out"

# shellcheck source=build-compare.sh
. "$kernels/build-compare.sh"
finish_build "$check" "$tmp/out" "$resources" fatbin \
  "committed CUDA binaries match their sources ($nvcc_version)"
