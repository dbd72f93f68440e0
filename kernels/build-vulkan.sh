#!/usr/bin/env bash
# Builds the Vulkan compute shaders kernels/vulkan/*.comp into the SPIR-V the kernels jar packages:
#   src/main/resources/io/gpusort/kernels/vulkan/<name>.spv   (one per entry of VARIANTS below)
#   src/main/resources/io/gpusort/kernels/vulkan/BUILD-INFO   (glslc version, flags, variants,
#                                                              SHA-256 of every source)
# The binaries are committed: Maven packages them as they are, so a machine without glslc builds
# the project. KernelBinariesTest checks that they match the sources and, where glslc is installed
# (CI installs Debian's glslc), rebuilds them and compares bytes.
#
#   kernels/build-vulkan.sh           rebuild and replace the committed binaries
#   kernels/build-vulkan.sh --check   rebuild into a temporary folder and compare; exit 1 listing
#                                     every difference, 0 if none
#
# GLSLC (default: glslc on PATH) selects the compiler. glslc runs in kernels/vulkan/ on relative
# names and without debug information, so the bytes do not depend on the checkout's location.
set -euo pipefail

kernels=$(cd "$(dirname "$0")" && pwd)
resources="$kernels/src/main/resources/io/gpusort/kernels/vulkan"
glslc=${GLSLC:-glslc}
FLAGS='--target-env=vulkan1.2 -O'
# <name>:<source>:<defines>
VARIANTS=(
  "radix_hist_u32:radix_hist.comp:"
  "radix_hist_u64:radix_hist.comp:-DKEY64"
  "radix_upsweep_u32:radix_upsweep.comp:"
  "radix_upsweep_u64:radix_upsweep.comp:-DKEY64"
  "radix_upsweep_rank_u32:radix_upsweep.comp:-DRANK"
  "radix_upsweep_rank_u64:radix_upsweep.comp:-DRANK -DKEY64"
  "radix_reduce:radix_reduce.comp:"
  "radix_scan:radix_scan.comp:"
  "radix_scatter_u32:radix_scatter.comp:"
  "radix_scatter_u64:radix_scatter.comp:-DKEY64"
  "radix_rank_u32:radix_rank.comp:"
  "radix_rank_u64:radix_rank.comp:-DKEY64"
  "oddeven_block_u32:oddeven_block.comp:"
  "oddeven_block_u64:oddeven_block.comp:-DKEY64"
  "oddeven_merge_u32:oddeven_merge.comp:"
  "oddeven_merge_u64:oddeven_merge.comp:-DKEY64"
  "words_extract:words.comp:"
  "words_gather:words.comp:-DGATHER"
)

check=0
case "${1:-}" in
  "") ;;
  --check) check=1 ;;
  -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
  *) echo "unknown argument: $1 (use --check or nothing)" >&2; exit 2 ;;
esac

command -v "$glslc" >/dev/null 2>&1 || { echo "glslc not found (apt-get install glslc, or set GLSLC)" >&2; exit 2; }
glslc_version=$("$glslc" --version | sed -n 1p)

# Writes OUT_DIR/<name>.spv for every variant and OUT_DIR/BUILD-INFO.
build_into() {
  local out_dir=$1 v name src defines
  mkdir -p "$out_dir"
  for v in "${VARIANTS[@]}"; do
    IFS=: read -r name src defines <<< "$v"
    echo "glslc vulkan/$src $defines -> $name.spv" >&2
    # shellcheck disable=SC2086  # FLAGS and defines are space-separated lists by design
    (cd "$kernels/vulkan" && "$glslc" $FLAGS $defines -o "$out_dir/$name.spv" "$src")
  done
  {
    echo "# Written by kernels/build-vulkan.sh; do not edit. Each <name>.spv here is, run in kernels/vulkan/:"
    echo "#   glslc <flags> <defines> -o <name>.spv <source>"
    echo "glslc: $glslc_version"
    echo "flags: $FLAGS"
    for v in "${VARIANTS[@]}"; do echo "variant: $v"; done
    (cd "$kernels" && for f in vulkan/*; do [ -f "$f" ] && echo "source: $f $(sha256sum "$f" | cut -d' ' -f1)"; done)
  } > "$out_dir/BUILD-INFO"
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
build_into "$tmp/out"

# shellcheck source=build-compare.sh
. "$kernels/build-compare.sh"
finish_build "$check" "$tmp/out" "$resources" spv "committed SPIR-V matches its sources ($glslc_version)"
