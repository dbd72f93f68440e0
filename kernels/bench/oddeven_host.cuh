// Host sequence of the odd-even hybrid sort (oddeven.cu's header comment), with the CUDA runtime
// API, for the benchmark harness and the self-test. Include it after ../cuda/oddeven.cu, in the
// same translation unit: it launches those kernels and reads their tuning table. The Java engine
// runs the same sequence through the driver API.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace oddeven {

constexpr uint32_t kMaxItems = 0x7FFFFFF7u;  // 2^31 - 9

// Launch parameters of one key width, as the loaded device code was built with them.
struct HostTuning {
  uint32_t sortThreads, sortItems, mergeThreads, mergeItems;
  uint32_t sortTile() const { return sortThreads * sortItems; }
  uint32_t mergeTile() const { return mergeThreads * mergeItems; }
};

// The tuning for keys of keyBytes (4 or 8) on the current device, read from gpusort_oddeven_tuning
// on first use per device (the table of the code the device runs: sm_80 and sm_90 may differ).
inline cudaError_t readTuning(uint32_t keyBytes, HostTuning* out) {
  constexpr int kMaxDevices = 64;
  static uint32_t table[kMaxDevices][8];
  static bool loaded[kMaxDevices];
  int device = 0;
  cudaError_t err = cudaGetDevice(&device);
  if (err != cudaSuccess) return err;
  if (device < 0 || device >= kMaxDevices) return cudaErrorInvalidDevice;
  if (!loaded[device]) {
    err = cudaMemcpyFromSymbol(table[device], gpusort_oddeven_tuning, sizeof(table[device]));
    if (err != cudaSuccess) return err;
    loaded[device] = true;
  }
  const uint32_t* t = table[device] + (keyBytes == 8 ? 4 : 0);
  *out = HostTuning{t[0], t[1], t[2], t[3]};
  return cudaSuccess;
}

inline uint32_t ceilDiv(uint32_t a, uint32_t b) { return a / b + (a % b != 0 ? 1 : 0); }

// Merge passes after the block sort: run = TILE at first, doubled by each pass until run >= n.
inline uint32_t mergePasses(uint32_t n, uint32_t sortTile) {
  uint32_t passes = 0;
  for (uint64_t run = sortTile; run < n; run *= 2) ++passes;
  return passes;
}

// The kernels of one key width.
template <typename K>
struct Kernels;

template <>
struct Kernels<uint32_t> {
  static constexpr auto blockSort = oddeven_block_sort_u32;
  static constexpr auto partition = oddeven_merge_partition_u32;
  static constexpr auto merge = oddeven_merge_pass_u32;
};

template <>
struct Kernels<uint64_t> {
  static constexpr auto blockSort = oddeven_block_sort_u64;
  static constexpr auto partition = oddeven_merge_partition_u64;
  static constexpr auto merge = oddeven_merge_pass_u64;
};

}  // namespace oddeven

// Entries the splits buffer of a sort of n items needs, for either key width: one per merge tile,
// plus one.
inline size_t oddevenSplitsCount(uint32_t n) {
  oddeven::HostTuning t32, t64;
  uint32_t mergeTile = 32;  // the smallest the kernels allow, should the table be unreadable
  if (oddeven::readTuning(4, &t32) == cudaSuccess && oddeven::readTuning(8, &t64) == cudaSuccess) {
    mergeTile = t32.mergeTile() < t64.mergeTile() ? t32.mergeTile() : t64.mergeTile();
  }
  return static_cast<size_t>(oddeven::ceilDiv(n, mergeTile)) + 1;
}

// Stable sort of n (key, value) pairs by key into keysOut/valsOut. valsIn NULL: value = input
// position. keysTmp/valsTmp: n items each; splits: oddevenSplitsCount(n) entries. The inputs may
// be the very buffers out or tmp (in place); out and tmp must not overlap. Asynchronous on stream;
// returns the first launch error.
template <typename K>
cudaError_t oddevenSortPairs(const K* keysIn, const uint32_t* valsIn, K* keysOut,
                             uint32_t* valsOut, K* keysTmp, uint32_t* valsTmp, uint32_t* splits,
                             uint32_t n, cudaStream_t stream) {
  static_assert(sizeof(K) == 4 || sizeof(K) == 8, "keys are uint32_t or uint64_t");
  using Ks = oddeven::Kernels<K>;
  using oddeven::ceilDiv;
  if (n == 0) return cudaSuccess;
  if (n > oddeven::kMaxItems) return cudaErrorInvalidValue;
  oddeven::HostTuning tuning;
  cudaError_t err = oddeven::readTuning(sizeof(K), &tuning);
  if (err != cudaSuccess) return err;
  const uint32_t tile = tuning.sortTile();
  const uint32_t mergeTiles = ceilDiv(n, tuning.mergeTile());
  const uint32_t partitionBlocks = ceilDiv(mergeTiles + 1, oddeven::kPartitionThreads);
  // The block sort writes to out when an even number of passes follows, so the last lands there.
  bool inOut = oddeven::mergePasses(n, tile) % 2 == 0;
  Ks::blockSort<<<ceilDiv(n, tile), tuning.sortThreads, 0, stream>>>(
      keysIn, valsIn, inOut ? keysOut : keysTmp, inOut ? valsOut : valsTmp, n);
  if ((err = cudaGetLastError()) != cudaSuccess) return err;
  for (uint64_t run = tile; run < n; run *= 2) {
    const K* srcKeys = inOut ? keysOut : keysTmp;
    const uint32_t* srcVals = inOut ? valsOut : valsTmp;
    K* dstKeys = inOut ? keysTmp : keysOut;
    uint32_t* dstVals = inOut ? valsTmp : valsOut;
    const uint32_t run32 = static_cast<uint32_t>(run);
    Ks::partition<<<partitionBlocks, oddeven::kPartitionThreads, 0, stream>>>(srcKeys, n, run32,
                                                                              splits);
    if ((err = cudaGetLastError()) != cudaSuccess) return err;
    Ks::merge<<<mergeTiles, tuning.mergeThreads, 0, stream>>>(srcKeys, srcVals, dstKeys, dstVals,
                                                              n, run32, splits);
    if ((err = cudaGetLastError()) != cudaSuccess) return err;
    inOut = !inOut;
  }
  return cudaSuccess;
}
