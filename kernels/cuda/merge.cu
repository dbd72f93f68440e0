// Merge tree of k sorted runs of (uint64 key, uint32 value) pairs, runs of any length: the reduce
// side of a global sort, whose k blocks arrive each sorted, puts them in order by merging them
// pairwise, level after level, instead of sorting their concatenation. Stable: equal keys take
// the earlier run's items first, so the result equals a stable sort of the concatenation.
// Measured 2.5-6x faster than radix.cu's sort of the concatenation on the H200 for k = 4..64 and
// 6.25e6..1e8 keys (kernels/bench/merge_bench.cu, which includes this file).
//
// Host sequence for n items in k >= 1 runs given by offsets o[0] = 0 <= o[1] <= ... <= o[k] = n,
// 1 <= n <= 2^31 - 9 (n == 0: launch nothing). Tuning: the 2 uint32 of gpusort_merge_tuning,
// {TREE_THREADS, TREE_ITEMS}; TILE = TREE_THREADS * TREE_ITEMS. The tile kernel traps on another
// block size.
//   Plan, on the host: the runs of level 0 are the k runs. Level l pairs its runs (2j, 2j + 1),
//   j = 0, 1, ...; an odd last run is a pair with bLen = 0 (copied through by the same kernels).
//   Pair j = {aStart, aLen, bLen, firstTile}, four uint32: A = [aStart, aStart + aLen), B right
//   after it; its output covers the same positions. firstTile = sum of ceil((aLen + bLen) / TILE)
//   over the level's earlier pairs; tiles(l) = that sum over all its pairs. Pair j becomes run j
//   of level l + 1. Levels continue while a level has more than one run (one level when k == 1).
//   Every level's pairs go to one device array, level l at its first pair's index.
//   Buffers: a level's keys and values out must not overlap its keys and values in; splits holds
//   max over levels of tiles(l) uint32, reused by every level (stream order). The engine uses two
//   key buffers K0 (the input) and K1 and two value buffers V0 and V1, n items each: level l reads
//   keys K[l % 2] and values V[(l + 1) % 2] (none at level 0) and writes K[(l + 1) % 2] and
//   V[l % 2], so the input keys are overwritten from level 1 on and the last level's values,
//   V[(L - 1) % 2], are the permutation. (The benchmark keeps its input and ping-pongs between
//   two other key buffers.)
//   for each level l:
//     merge_tree_partition_u64<<<ceil(tiles(l) / 256), 256>>>
//         (keysIn, pairs + firstPair(l), numPairs(l), tiles(l), splits)
//     merge_tree_tile_u64<<<tiles(l), TREE_THREADS>>>
//         (keysIn, valsIn or NULL, keysOut or NULL, valsOut, pairs + firstPair(l), numPairs(l),
//          splits)
//   valsIn NULL: value = input position (the first level's iota). keysOut NULL: keys are not
//   written (the last level, when only the permutation is wanted).
//   Static shared memory only (no dynamic shared memory to set).
//
// splits[i]: the number of A items among the outputs of its pair before output tile i's first
// (merge path, equal keys taking A first). A tile's outputs lie within one pair, so each tile
// merges one slice of A with one slice of B in shared memory.
#include <cstdint>

#include "merge_path.cuh"
#include "tuning.cuh"

namespace mergetree {

using mergepath::umin;

constexpr uint32_t PARTITION_THREADS = 256;
constexpr uint32_t THREADS = MERGE_TREE_THREADS, ITEMS = MERGE_TREE_ITEMS, TILE = THREADS * ITEMS;
constexpr uint32_t LOG_ITEMS = mergepath::log2u(ITEMS);
static_assert(mergepath::isPow2(THREADS) && THREADS <= 1024,
              "MERGE_TREE_THREADS: a power of two <= 1024");
static_assert(mergepath::isPow2(ITEMS) && ITEMS >= 2, "MERGE_TREE_ITEMS: a power of two >= 2");
static_assert(TILE >= 32 && TILE * 12 <= 48 * 1024, "tile: 32 items to 48 KB of shared memory");

// One pair of a level (see the header comment); four uint32, as the host writes them.
struct Pair {
  uint32_t aStart, aLen, bLen, firstTile;
};
static_assert(sizeof(Pair) == 16, "Pair: four packed uint32");

// The pair owning tile `tile`: the last with firstTile <= tile. Pairs without items own no tile
// and share firstTile with the next one, which the search then picks.
__device__ __forceinline__ Pair pairOf(const Pair* pairs, uint32_t numPairs, uint32_t tile) {
  uint32_t lo = 0, hi = numPairs;
  while (lo < hi) {
    const uint32_t mid = (lo + hi) >> 1;
    if (pairs[mid].firstTile <= tile) lo = mid + 1;
    else hi = mid;
  }
  return pairs[lo - 1];
}

__device__ __forceinline__ void partitionOne(const uint64_t* keys, const Pair* pairs,
                                             uint32_t numPairs, uint32_t tiles, uint32_t* splits,
                                             uint32_t i) {
  if (i >= tiles) return;
  const Pair p = pairOf(pairs, numPairs, i);
  const uint64_t* a = keys + p.aStart;
  const uint64_t* b = a + p.aLen;
  splits[i] = mergepath::mergePathSplit<uint64_t>(
      (i - p.firstTile) * TILE, p.aLen, p.bLen, [a](uint32_t j) { return a[j]; },
      [b](uint32_t j) { return b[j]; });
}

// The swizzle spreads a thread's ITEMS consecutive slots over different banks for the
// thread-major write after the merge; the striped loads and stores stay conflict-free.
__device__ __forceinline__ uint32_t slot(uint32_t e) { return mergepath::swizzle<LOG_ITEMS>(e); }

// One output tile: its A and B slices go to shared memory (A first), each thread finds the start
// of its ITEMS outputs by merge path there and merges them serially, and the block writes the
// tile back coalesced.
__device__ __forceinline__ void mergeOneTile(const uint64_t* __restrict__ keysIn,
                                             const uint32_t* __restrict__ valsIn,
                                             uint64_t* __restrict__ keysOut,
                                             uint32_t* __restrict__ valsOut,
                                             const Pair* __restrict__ pairs, uint32_t numPairs,
                                             const uint32_t* __restrict__ splits) {
  __shared__ uint64_t sKey[TILE];
  __shared__ uint32_t sVal[TILE];
  const uint32_t tile = blockIdx.x, t = threadIdx.x;
  const Pair p = pairOf(pairs, numPairs, tile);
  const uint32_t len = p.aLen + p.bLen;
  const uint32_t d0 = (tile - p.firstTile) * TILE;  // first output of the tile, within the pair
  const uint32_t total = umin(TILE, len - d0);
  const uint32_t a0 = splits[tile];
  const uint32_t a1 = d0 + TILE >= len ? p.aLen : splits[tile + 1];
  const uint32_t aCount = a1 - a0, bCount = total - aCount;
  const uint32_t aFrom = p.aStart + a0;
  // B's first item in the tile is at p.aStart + p.aLen + (d0 - a0); tile index i >= aCount reads
  // bFrom + i (unsigned arithmetic: the sum is exact even where bFrom alone wraps).
  const uint32_t bFrom = p.aStart + p.aLen + (d0 - a0) - aCount;

#pragma unroll
  for (uint32_t j = 0; j < ITEMS; ++j) {
    const uint32_t i = j * THREADS + t;
    if (i < total) {
      const uint32_t from = i < aCount ? aFrom + i : bFrom + i;
      sKey[slot(i)] = keysIn[from];
      sVal[slot(i)] = valsIn == nullptr ? from : valsIn[from];
    }
  }
  __syncthreads();

  const uint32_t d = umin(t * ITEMS, total);
  const uint64_t* key = sKey;
  uint32_t ai = mergepath::mergePathSplit<uint64_t>(
      d, aCount, bCount, [key](uint32_t j) { return key[slot(j)]; },
      [key, aCount](uint32_t j) { return key[slot(aCount + j)]; });
  uint32_t bi = aCount + d - ai;
  // Reads are clamped into the tile: past an exhausted side the key read is never taken, and
  // past the tile's end nothing merged is written out.
  constexpr uint32_t LAST = TILE - 1;
  uint64_t ka = sKey[slot(umin(ai, LAST))];
  uint64_t kb = sKey[slot(umin(bi, LAST))];
  uint64_t outKey[ITEMS];
  uint32_t outVal[ITEMS];
#pragma unroll
  for (uint32_t j = 0; j < ITEMS; ++j) {
    const bool takeA = ai < aCount && (bi >= total || ka <= kb);
    const uint32_t from = takeA ? ai : bi;
    outKey[j] = takeA ? ka : kb;
    outVal[j] = sVal[slot(umin(from, LAST))];
    ai += takeA;
    bi += !takeA;
    const uint64_t next = sKey[slot(umin(from + 1, LAST))];
    ka = takeA ? next : ka;
    kb = takeA ? kb : next;
  }
  __syncthreads();
#pragma unroll
  for (uint32_t j = 0; j < ITEMS; ++j) {
    sKey[slot(t * ITEMS + j)] = outKey[j];
    sVal[slot(t * ITEMS + j)] = outVal[j];
  }
  __syncthreads();
  const uint32_t outStart = p.aStart + d0;
#pragma unroll
  for (uint32_t j = 0; j < ITEMS; ++j) {
    const uint32_t i = j * THREADS + t;
    if (i < total) {
      if (keysOut != nullptr) keysOut[outStart + i] = sKey[slot(i)];
      valsOut[outStart + i] = sVal[slot(i)];
    }
  }
}

}  // namespace mergetree

// {TREE_THREADS, TREE_ITEMS}.
// extern "C" outside a braced block: external linkage, so the const table is kept and visible.
extern "C" __device__ const uint32_t gpusort_merge_tuning[2] = {MERGE_TREE_THREADS,
                                                                MERGE_TREE_ITEMS};

extern "C" {

__global__ void __launch_bounds__(mergetree::PARTITION_THREADS)
    merge_tree_partition_u64(const uint64_t* __restrict__ keys,
                             const mergetree::Pair* __restrict__ pairs, uint32_t num_pairs,
                             uint32_t tiles, uint32_t* __restrict__ splits) {
  mergetree::partitionOne(keys, pairs, num_pairs, tiles, splits,
                          blockIdx.x * blockDim.x + threadIdx.x);
}

__global__ void __launch_bounds__(MERGE_TREE_THREADS)
    merge_tree_tile_u64(const uint64_t* __restrict__ keys_in,
                        const uint32_t* __restrict__ vals_in, uint64_t* __restrict__ keys_out,
                        uint32_t* __restrict__ vals_out, const mergetree::Pair* __restrict__ pairs,
                        uint32_t num_pairs, const uint32_t* __restrict__ splits) {
  if (blockDim.x != mergetree::THREADS) __trap();  // launched with another tuning
  mergetree::mergeOneTile(keys_in, vals_in, keys_out, vals_out, pairs, num_pairs, splits);
}

}  // extern "C"
