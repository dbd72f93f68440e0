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
  uint32_t sortThreads, sortItems, mergeThreads, mergeItems, merge4Threads, merge4Items;
  uint32_t sortTile() const { return sortThreads * sortItems; }
  uint32_t mergeTile() const { return mergeThreads * mergeItems; }
  uint32_t merge4Tile() const { return merge4Threads * merge4Items; }
};

// The tuning for keys of keyBytes (4 or 8) on the current device, read from gpusort_oddeven_tuning
// on first use per device (the table of the code the device runs: sm_80 and sm_90 may differ).
inline cudaError_t readTuning(uint32_t keyBytes, HostTuning* out) {
  constexpr int kMaxDevices = 64;
  static uint32_t table[kMaxDevices][12];
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
  const uint32_t* t4 = table[device] + (keyBytes == 8 ? 10 : 8);
  *out = HostTuning{t[0], t[1], t[2], t[3], t4[0], t4[1]};
  return cudaSuccess;
}

inline uint32_t ceilDiv(uint32_t a, uint32_t b) { return a / b + (a % b != 0 ? 1 : 0); }

// Whether the merge pass for `run` (< n) is a 4-way one: with fourWay, while more than two runs
// are left. (Measured on the H200, 2026-11-29: the 4-way passes were slower than twice as many
// 2-way ones, 12.4 against 9.6 ms for 1e8 32-bit pairs, so the engine runs 2-way passes only.)
inline bool isMerge4(uint64_t run, uint32_t n, bool fourWay) { return fourWay && 2 * run < n; }

// Merge passes after the block sort: run = TILE at first, quadrupled by a 4-way pass while more
// than two runs are left, then doubled by one 2-way pass if two are left.
inline uint32_t mergePasses(uint32_t n, uint32_t sortTile, bool fourWay) {
  uint32_t passes = 0;
  for (uint64_t run = sortTile; run < n; run *= isMerge4(run, n, fourWay) ? 4 : 2) ++passes;
  return passes;
}

// The sequence, with the launches left to Launcher (the CUDA runtime here; an emulator in tests):
// blockSort(grid, block, keysIn, valsIn, keysOut, valsOut, n), partition(grid, block, keys, n,
// run, splits), merge(grid, block, keysIn, valsIn, keysOut, valsOut, n, run, splits), and
// partition4 and merge4 with the arguments of partition and merge, each returning the launch's
// error.
template <typename K, class Launcher>
cudaError_t sortPairsWith(Launcher& launcher, const HostTuning& tuning, const K* keysIn,
                          const uint32_t* valsIn, K* keysOut, uint32_t* valsOut, K* keysTmp,
                          uint32_t* valsTmp, uint32_t* splits, uint32_t n, bool fourWay) {
  if (n == 0) return cudaSuccess;
  if (n > kMaxItems) return cudaErrorInvalidValue;
  const uint32_t tile = tuning.sortTile();
  const uint32_t mergeTiles = ceilDiv(n, tuning.mergeTile());
  const uint32_t merge4Tiles = ceilDiv(n, tuning.merge4Tile());
  // The block sort writes to out when an even number of passes follows, so the last lands there.
  bool inOut = mergePasses(n, tile, fourWay) % 2 == 0;
  cudaError_t err = launcher.blockSort(ceilDiv(n, tile), tuning.sortThreads, keysIn, valsIn,
                                       inOut ? keysOut : keysTmp, inOut ? valsOut : valsTmp, n);
  if (err != cudaSuccess) return err;
  for (uint64_t run = tile; run < n;) {
    const K* srcKeys = inOut ? keysOut : keysTmp;
    const uint32_t* srcVals = inOut ? valsOut : valsTmp;
    K* dstKeys = inOut ? keysTmp : keysOut;
    uint32_t* dstVals = inOut ? valsTmp : valsOut;
    const uint32_t run32 = static_cast<uint32_t>(run);
    if (isMerge4(run, n, fourWay)) {
      err = launcher.partition4(ceilDiv(merge4Tiles + 1, kPartitionThreads), kPartitionThreads,
                                srcKeys, n, run32, splits);
      if (err != cudaSuccess) return err;
      err = launcher.merge4(merge4Tiles, tuning.merge4Threads, srcKeys, srcVals, dstKeys, dstVals,
                            n, run32, splits);
      run *= 4;
    } else {
      err = launcher.partition(ceilDiv(mergeTiles + 1, kPartitionThreads), kPartitionThreads,
                               srcKeys, n, run32, splits);
      if (err != cudaSuccess) return err;
      err = launcher.merge(mergeTiles, tuning.mergeThreads, srcKeys, srcVals, dstKeys, dstVals, n,
                           run32, splits);
      run *= 2;
    }
    if (err != cudaSuccess) return err;
    inOut = !inOut;
  }
  return cudaSuccess;
}

// The kernels of one key width.
template <typename K>
struct Kernels;

template <>
struct Kernels<uint32_t> {
  static constexpr auto blockSort = oddeven_block_sort_u32;
  static constexpr auto partition = oddeven_merge_partition_u32;
  static constexpr auto merge = oddeven_merge_pass_u32;
  static constexpr auto partition4 = oddeven_merge4_partition_u32;
  static constexpr auto merge4 = oddeven_merge4_pass_u32;
};

template <>
struct Kernels<uint64_t> {
  static constexpr auto blockSort = oddeven_block_sort_u64;
  static constexpr auto partition = oddeven_merge_partition_u64;
  static constexpr auto merge = oddeven_merge_pass_u64;
  static constexpr auto partition4 = oddeven_merge4_partition_u64;
  static constexpr auto merge4 = oddeven_merge4_pass_u64;
};

// sortPairsWith's launcher for the CUDA runtime, on one stream.
template <typename K>
struct KernelLauncher {
  using Ks = Kernels<K>;
  cudaStream_t stream;
  cudaError_t blockSort(uint32_t grid, uint32_t block, const K* ki, const uint32_t* vi, K* ko,
                        uint32_t* vo, uint32_t n) {
    Ks::blockSort<<<grid, block, 0, stream>>>(ki, vi, ko, vo, n);
    return cudaGetLastError();
  }
  cudaError_t partition(uint32_t grid, uint32_t block, const K* k, uint32_t n, uint32_t run,
                        uint32_t* splits) {
    Ks::partition<<<grid, block, 0, stream>>>(k, n, run, splits);
    return cudaGetLastError();
  }
  cudaError_t merge(uint32_t grid, uint32_t block, const K* ki, const uint32_t* vi, K* ko,
                    uint32_t* vo, uint32_t n, uint32_t run, const uint32_t* splits) {
    Ks::merge<<<grid, block, 0, stream>>>(ki, vi, ko, vo, n, run, splits);
    return cudaGetLastError();
  }
  cudaError_t partition4(uint32_t grid, uint32_t block, const K* k, uint32_t n, uint32_t run,
                         uint32_t* splits) {
    Ks::partition4<<<grid, block, 0, stream>>>(k, n, run, splits);
    return cudaGetLastError();
  }
  cudaError_t merge4(uint32_t grid, uint32_t block, const K* ki, const uint32_t* vi, K* ko,
                     uint32_t* vo, uint32_t n, uint32_t run, const uint32_t* splits) {
    Ks::merge4<<<grid, block, 0, stream>>>(ki, vi, ko, vo, n, run, splits);
    return cudaGetLastError();
  }
};

}  // namespace oddeven

// Entries the splits buffer of a sort of n items needs, for either key width: the most of a
// 2-way pass (one per merge tile, plus one) and a 4-way pass (three per 4-way merge tile, plus
// three).
inline size_t oddevenSplitsCount(uint32_t n) {
  oddeven::HostTuning t32, t64;
  uint32_t mergeTile = 32, merge4Tile = 32;  // the smallest the kernels allow, should the table
                                             // be unreadable
  if (oddeven::readTuning(4, &t32) == cudaSuccess && oddeven::readTuning(8, &t64) == cudaSuccess) {
    mergeTile = t32.mergeTile() < t64.mergeTile() ? t32.mergeTile() : t64.mergeTile();
    merge4Tile = t32.merge4Tile() < t64.merge4Tile() ? t32.merge4Tile() : t64.merge4Tile();
  }
  const size_t count2 = static_cast<size_t>(oddeven::ceilDiv(n, mergeTile)) + 1;
  const size_t count4 = 3 * (static_cast<size_t>(oddeven::ceilDiv(n, merge4Tile)) + 1);
  return count2 > count4 ? count2 : count4;
}

// Stable sort of n (key, value) pairs by key into keysOut/valsOut. valsIn NULL: value = input
// position. keysTmp/valsTmp: n items each; splits: oddevenSplitsCount(n) entries. The inputs may
// be the very buffers out or tmp (in place); out and tmp must not overlap. Asynchronous on stream;
// returns the first launch error.
template <typename K>
cudaError_t oddevenSortPairs(const K* keysIn, const uint32_t* valsIn, K* keysOut,
                             uint32_t* valsOut, K* keysTmp, uint32_t* valsTmp, uint32_t* splits,
                             uint32_t n, cudaStream_t stream, bool fourWay = false) {
  static_assert(sizeof(K) == 4 || sizeof(K) == 8, "keys are uint32_t or uint64_t");
  if (n == 0) return cudaSuccess;
  oddeven::HostTuning tuning;
  cudaError_t err = oddeven::readTuning(sizeof(K), &tuning);
  if (err != cudaSuccess) return err;
  oddeven::KernelLauncher<K> launcher{stream};
  return oddeven::sortPairsWith<K>(launcher, tuning, keysIn, valsIn, keysOut, valsOut, keysTmp,
                                   valsTmp, splits, n, fourWay);
}
