// LSD radix sort of (key, 32-bit value) pairs, 8-bit digits, for 32- and 64-bit unsigned keys.
//
// Host sequence for one key column of n items (the Java engine and the benchmark harness both
// follow it):
//   1. memset counts[passes * 256] to 0, then radix_histogram_{u32,u64} (or radix_narrow_histogram,
//      which also writes the high halves of 64-bit words as 32-bit keys): one read of the keys
//      counts every digit of every pass at once.
//   2. radix_scan, one block per pass: exclusive prefix sums of the counts, the first output
//      position of each digit value in each pass.
//   3. The host reads the counts back. A pass whose digit has one value with count n is constant
//      over the input and is skipped: it would not move anything.
//   4. memset the per-pass tile counters to 0, then one radix_onesweep_* launch per remaining pass,
//      least significant digit first, ping-ponging between two key and two value buffers. The
//      first pass may take no values (flag VALUES_IOTA: value = input position); the last may skip
//      writing keys (flag NO_KEYS_OUT) when only the permutation is wanted.
//
// Onesweep (after Adinets & Merrill, "Onesweep: A Faster Least Significant Digit Radix Sort for
// GPUs", 2022): each pass is a single kernel. A block takes the next tile in launch order from an
// atomic counter, ranks its keys by digit in shared memory, publishes its digit counts, and looks
// back over the tiles before it (decoupled look-back) for each digit's exclusive prefix, so that
// keys are read once and written once per pass. The look-back spins on other blocks: it relies on
// the forward progress of resident blocks, which CUDA gives since tile ids are taken in the order
// blocks start running.
//
// Look-back words are 64 bits: [63:34] generation, [33:32] status, [31:0] count. Every pass uses a
// new generation, so words left by earlier passes read as "not yet published" and the buffer is
// zeroed only once, when it is allocated (generation 0 is never used).
#include <cstdint>

#include "tuning.cuh"

namespace radix {

constexpr int RADIX_BITS = 8;
constexpr int RADIX = 1 << RADIX_BITS;
constexpr int WARP_THREADS = 32;
constexpr uint32_t FULL_MASK = 0xffffffffu;

constexpr uint32_t FLAG_VALUES_IOTA = 1;
constexpr uint32_t FLAG_NO_KEYS_OUT = 2;

#ifdef RADIX_DEBUG_LOOKBACK_STATS
// Diagnosis builds of the harness only (-DRADIX_DEBUG_LOOKBACK_STATS): where a pass's time goes.
// Sums over every tile of a launch: look-back words read, reads of unpublished words, and, from
// thread 0 of each block, cycles from the block's start to the look-back, in the look-back and
// after it.
// tiles, words read, read rounds stopped on an unpublished word, cycles before, in, after
__device__ unsigned long long gLookbackStats[6];
#endif

constexpr uint64_t STATUS_AGGREGATE = 1;
constexpr uint64_t STATUS_INCLUSIVE = 2;

template <typename K>
struct SweepTuning;

template <>
struct SweepTuning<uint32_t> {
  static constexpr int THREADS = RADIX_SWEEP_THREADS_32;
  static constexpr int ITEMS = RADIX_SWEEP_ITEMS_32;
  static constexpr int PASSES = 4;
};

template <>
struct SweepTuning<uint64_t> {
  static constexpr int THREADS = RADIX_SWEEP_THREADS_64;
  static constexpr int ITEMS = RADIX_SWEEP_ITEMS_64;
  static constexpr int PASSES = 8;
};

__device__ __forceinline__ uint32_t digitOf(uint32_t key, uint32_t shift) {
  return (key >> shift) & (RADIX - 1);
}

__device__ __forceinline__ uint32_t digitOf(uint64_t key, uint32_t shift) {
  return static_cast<uint32_t>(key >> shift) & (RADIX - 1);
}

__device__ __forceinline__ uint32_t laneId() {
  uint32_t lane;
  asm("mov.u32 %0, %%laneid;" : "=r"(lane));
  return lane;
}

__device__ __forceinline__ uint32_t laneMaskLt() {
  uint32_t mask;
  asm("mov.u32 %0, %%lanemask_lt;" : "=r"(mask));
  return mask;
}

// Relaxed, device-scope accesses to the look-back words: the value and its status travel in one
// 64-bit word, so no fence is needed to publish them together.
__device__ __forceinline__ uint64_t loadRelaxed(const uint64_t* address) {
  uint64_t value;
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(value) : "l"(address) : "memory");
  return value;
}

__device__ __forceinline__ void storeRelaxed(uint64_t* address, uint64_t value) {
  asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(address), "l"(value) : "memory");
}

__device__ __forceinline__ uint64_t lookbackWord(uint32_t generation, uint64_t status,
                                                 uint32_t count) {
  return (static_cast<uint64_t>(generation) << 34) | (status << 32) | count;
}

// The lanes of the warp whose digit equals this lane's (what __match_any_sync returns), built from
// one ballot per digit bit. Ballots run at full rate on the integer pipes; the match instruction is
// slow and issues to the pipes that the pass's shared-memory traffic already fills (with it, the
// u32 pass ran at 0.68x CUB on the H200, with ballots at 0.89x: BENCHMARKS.md).
__device__ __forceinline__ uint32_t peersOf(uint32_t digit) {
  uint32_t peers = FULL_MASK;
#pragma unroll
  for (int bit = 0; bit < RADIX_BITS; ++bit) {
    const bool set = (digit >> bit) & 1;
    const uint32_t voters = __ballot_sync(FULL_MASK, set);
    peers &= set ? voters : ~voters;
  }
  return peers;
}

__device__ __forceinline__ uint32_t warpInclusiveSum(uint32_t value) {
  const uint32_t lane = laneId();
#pragma unroll
  for (int offset = 1; offset < WARP_THREADS; offset <<= 1) {
    uint32_t other = __shfl_up_sync(FULL_MASK, value, offset);
    if (lane >= static_cast<uint32_t>(offset)) value += other;
  }
  return value;
}

// Decoupled look-back for one digit of a tile (not the first): sums the counts of earlier tiles,
// walking back until one that has published its inclusive prefix, then publishes this tile's.
// Returns the tile's exclusive prefix for the digit. The words of WINDOW earlier tiles are read at
// once: walks are several tiles long (all resident tiles look back at about the same time), and
// one round trip per window instead of per tile shortens them, which in turn lets later tiles
// find inclusive prefixes sooner.
template <int WINDOW>
__device__ __forceinline__ uint32_t lookBack(uint64_t* tileWords, uint32_t tile, uint32_t digit,
                                             uint32_t generation, uint32_t blockCount
#ifdef RADIX_DEBUG_LOOKBACK_STATS
                                             ,
                                             unsigned long long& wordsRead,
                                             unsigned long long& spins
#endif
) {
  uint32_t exclusive = 0;
  uint32_t back = 1;  // how many tiles back the next word to sum lies
  while (true) {
    uint64_t values[WINDOW];
#pragma unroll
    for (int w = 0; w < WINDOW; ++w) {
      // Tile 0 always publishes an inclusive prefix, so words past it are never summed.
      values[w] = back + w <= tile
                      ? loadRelaxed(tileWords + digit - static_cast<uint64_t>(back + w) * RADIX)
                      : 0;
    }
#ifdef RADIX_DEBUG_LOOKBACK_STATS
    wordsRead += WINDOW;
#endif
    int summed = 0;
#pragma unroll
    for (int w = 0; w < WINDOW; ++w) {
      const uint64_t value = values[w];
      if ((value >> 34) != generation) break;  // not published yet in this pass: read it again
      exclusive += static_cast<uint32_t>(value);
      if (((value >> 32) & 3) == STATUS_INCLUSIVE) {
        storeRelaxed(tileWords + digit,
                     lookbackWord(generation, STATUS_INCLUSIVE, exclusive + blockCount));
        return exclusive;
      }
      ++summed;
    }
#ifdef RADIX_DEBUG_LOOKBACK_STATS
    if (summed < WINDOW) ++spins;
#endif
    back += summed;
  }
}

#ifdef RADIX_DEBUG_LOOKBACK_STATS
#define LOOKBACK_STATS_ARGS , wordsRead, spins
#else
#define LOOKBACK_STATS_ARGS
#endif

// Adds one key's digits of every pass to the block's shared counts. A warp whose 32 keys share a
// digit adds 32 once: constant and nearly constant digits (the ones worth finding) would otherwise
// serialise 32 atomics on one shared word.
template <int PASSES, typename K>
__device__ __forceinline__ void countDigits(K key, bool fullWarp, uint32_t (*counts)[RADIX]) {
#pragma unroll
  for (int pass = 0; pass < PASSES; ++pass) {
    const uint32_t digit = digitOf(key, pass * RADIX_BITS);
    if (fullWarp) {
      const uint32_t first = __shfl_sync(FULL_MASK, digit, 0);
      if (__all_sync(FULL_MASK, digit == first)) {
        if (laneId() == 0) atomicAdd(&counts[pass][first], WARP_THREADS);
        continue;
      }
    }
    atomicAdd(&counts[pass][digit], 1u);
  }
}

template <int PASSES>
__device__ __forceinline__ void flushCounts(uint32_t (*shared)[RADIX], uint32_t* counts) {
  __syncthreads();
  for (int i = threadIdx.x; i < PASSES * RADIX; i += blockDim.x) {
    const uint32_t count = shared[i / RADIX][i % RADIX];
    if (count != 0) atomicAdd(&counts[i], count);
  }
}

// Grid-stride over tiles of HIST_THREADS * HIST_ITEMS keys, item i of thread t at tile offset
// i * HIST_THREADS + t (coalesced). OutT differs from InT only for the narrowing variant, which
// keeps the high 32 bits of each 64-bit word.
template <typename InT, typename OutT, bool NARROW>
__device__ void histogram(const InT* keysIn, OutT* keysOut, uint32_t n, uint32_t* counts) {
  constexpr int PASSES = sizeof(OutT) == 4 ? 4 : 8;
  constexpr uint32_t TILE = RADIX_HIST_THREADS * RADIX_HIST_ITEMS;
  __shared__ uint32_t shared[PASSES][RADIX];
  for (int i = threadIdx.x; i < PASSES * RADIX; i += blockDim.x) shared[i / RADIX][i % RADIX] = 0;
  __syncthreads();

  for (uint64_t tileStart = static_cast<uint64_t>(blockIdx.x) * TILE; tileStart < n;
       tileStart += static_cast<uint64_t>(gridDim.x) * TILE) {
    const bool fullTile = tileStart + TILE <= n;
    OutT keys[RADIX_HIST_ITEMS];
#pragma unroll
    for (int i = 0; i < RADIX_HIST_ITEMS; ++i) {
      const uint64_t index = tileStart + i * RADIX_HIST_THREADS + threadIdx.x;
      if (fullTile || index < n) {
        const InT raw = keysIn[index];
        keys[i] = NARROW ? static_cast<OutT>(static_cast<uint64_t>(raw) >> 32)
                         : static_cast<OutT>(raw);
      }
    }
#pragma unroll
    for (int i = 0; i < RADIX_HIST_ITEMS; ++i) {
      const uint64_t index = tileStart + i * RADIX_HIST_THREADS + threadIdx.x;
      if (fullTile || index < n) {
        if (NARROW) keysOut[index] = keys[i];
        countDigits<PASSES>(keys[i], fullTile, shared);
      }
    }
  }
  flushCounts<PASSES>(shared, counts);
}

// A tile's ranks (each item's slot after the local sort), two 16-bit ranks to a register: indices
// are compile-time constants once loops are unrolled, so packing costs a few ALU operations and
// leaves registers for more items per thread.
template <int ITEMS>
struct Ranks {
  uint32_t words[(ITEMS + 1) / 2];
  __device__ __forceinline__ uint32_t get(int i) const {
    return (i & 1) ? words[i / 2] >> 16 : words[i / 2] & 0xffffu;
  }
  __device__ __forceinline__ void set(int i, uint32_t value) {
    words[i / 2] = (i & 1) ? (words[i / 2] & 0xffffu) | (value << 16)
                           : (words[i / 2] & 0xffff0000u) | value;
  }
};

// One pass: sorts tile by tile on the digit at `shift`, scattering to the digit's global position.
// KOut narrower than K writes each key as (key >> narrowShift): once the digits left to sort all
// lie in 32 bits, later passes move 4-byte keys instead of 8-byte ones.
template <typename K, typename KOut = K>
__device__ void onesweep(const K* __restrict__ keysIn, KOut* __restrict__ keysOut,
                         const uint32_t* __restrict__ valsIn, uint32_t* __restrict__ valsOut,
                         uint32_t n, uint32_t shift, const uint32_t* __restrict__ digitOffsets,
                         uint64_t* lookback, uint32_t* tileCounter, uint32_t generation,
                         uint32_t flags, uint32_t narrowShift = 0) {
  constexpr int THREADS = SweepTuning<K>::THREADS;
  constexpr int ITEMS = SweepTuning<K>::ITEMS;
  constexpr int WARPS = THREADS / WARP_THREADS;
  constexpr int TILE = THREADS * ITEMS;
  constexpr int WARP_TILE = WARP_THREADS * ITEMS;
  static_assert(THREADS == RADIX, "one thread per digit value in the per-digit steps");
  static_assert(TILE <= 65536, "16-bit ranks");

  __shared__ uint32_t warpCounts[WARPS][RADIX];
  __shared__ uint32_t tileCounts[RADIX];
  __shared__ uint32_t scatterBase[RADIX];
  __shared__ uint32_t warpSums[WARPS];
  __shared__ uint32_t tileShared;
  // Keys in digit order, then (reusing the space) values in the same order.
  __shared__ alignas(16) unsigned char exchange[TILE * sizeof(K)];
  __shared__ uint8_t slotDigits[TILE];
  K* exchangeKeys = reinterpret_cast<K*>(exchange);
  uint32_t* exchangeVals = reinterpret_cast<uint32_t*>(exchange);

  const uint32_t tid = threadIdx.x;
  const uint32_t lane = laneId();
  const uint32_t warp = tid / WARP_THREADS;

#pragma unroll
  for (int w = 0; w < WARPS; ++w) warpCounts[w][tid] = 0;
  tileCounts[tid] = 0;
  if (tid == 0) tileShared = atomicAdd(tileCounter, 1u);
#ifdef RADIX_DEBUG_LOOKBACK_STATS
  __shared__ unsigned long long blockStats[2];  // words read, rounds stopped on unpublished words
  if (tid == 0) blockStats[0] = blockStats[1] = 0;
  const long long blockStartCycles = clock64();
  long long lookbackStartCycles = 0, lookbackEndCycles = 0;
  unsigned long long wordsRead = 0, spins = 0;
#endif
  __syncthreads();
  const uint32_t tile = tileShared;
  const uint64_t tileStart = static_cast<uint64_t>(tile) * TILE;
  const uint32_t validInTile =
      static_cast<uint32_t>(min(static_cast<uint64_t>(TILE), n - tileStart));

  // Warp-striped load: item i of lane l is tile position warp * WARP_TILE + i * 32 + l, so ranking
  // items in (warp, item, lane) order ranks them in input order, which makes the pass stable.
  // Positions past n get the largest key: digit 255, ranked after every real key of the tile.
  K keys[ITEMS];
  const uint32_t warpBase = warp * WARP_TILE + lane;
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const uint32_t position = warpBase + i * WARP_THREADS;
    keys[i] = position < validInTile ? keysIn[tileStart + position] : ~static_cast<K>(0);
  }

  // Early counts: the tile's digit counts go out to the look-back before the (much longer)
  // ranking, so that later tiles find this one's counts, and usually its inclusive prefix, as
  // soon as they look.
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) atomicAdd(&tileCounts[digitOf(keys[i], shift)], 1u);
  __syncthreads();
  uint64_t* tileWords = lookback + static_cast<uint64_t>(tile) * RADIX;
  const uint32_t blockCount = tileCounts[tid];
  storeRelaxed(tileWords + tid,
               lookbackWord(generation, tile == 0 ? STATUS_INCLUSIVE : STATUS_AGGREGATE,
                            blockCount));

  // Rank within the warp: lanes holding the same digit find each other (peersOf); the highest of
  // them bumps the warp's count for the digit by the group's size.
  Ranks<ITEMS> ranks;
  const uint32_t lowerLanes = laneMaskLt();
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const uint32_t digit = digitOf(keys[i], shift);
    const uint32_t peers = peersOf(digit);
    const uint32_t leader = 31 - __clz(peers);
    uint32_t before = 0;
    if (lane == leader) {
      before = warpCounts[warp][digit];
      warpCounts[warp][digit] = before + __popc(peers);
    }
    before = __shfl_sync(FULL_MASK, before, leader);
    ranks.set(i, before + __popc(peers & lowerLanes));
    __syncwarp();
  }
  __syncthreads();

  // Per digit (thread tid owns digit tid): warp counts become each warp's start within the digit,
  // and the digits' block-local starts are scanned.
  const uint32_t digit = tid;
  uint32_t warpStart = 0;
#pragma unroll
  for (int w = 0; w < WARPS; ++w) {
    const uint32_t count = warpCounts[w][digit];
    warpCounts[w][digit] = warpStart;
    warpStart += count;
  }
  const uint32_t inclusive = warpInclusiveSum(blockCount);
  if (lane == WARP_THREADS - 1) warpSums[warp] = inclusive;
  __syncthreads();
  uint32_t warpPrefix = 0;
#pragma unroll
  for (int w = 0; w < WARPS; ++w) warpPrefix += w < static_cast<int>(warp) ? warpSums[w] : 0;
  const uint32_t start = warpPrefix + inclusive - blockCount;
  // Each warp's start within the tile for this digit: one shared read per key below instead of two.
#pragma unroll
  for (int w = 0; w < WARPS; ++w) warpCounts[w][digit] += start;
  __syncthreads();

  // Keys (and values) to shared memory in digit order (the tile's local sort).
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const uint32_t d = digitOf(keys[i], shift);
    const uint32_t rank = ranks.get(i) + warpCounts[warp][d];
    ranks.set(i, rank);
    exchangeKeys[rank] = keys[i];
  }

  // Decoupled look-back for this thread's digit: sum the counts of earlier tiles, walking back
  // until a tile that has published its inclusive prefix.
  uint32_t exclusive = 0;
#ifdef RADIX_DEBUG_LOOKBACK_STATS
  lookbackStartCycles = clock64();
#endif
#ifdef RADIX_DEBUG_SKIP_LOOKBACK
  if (false) {  // timing experiment only: wrong output
#else
  if (tile > 0) {
#endif
    exclusive = lookBack<RADIX_LOOKBACK_WINDOW>(tileWords, tile, digit, generation, blockCount
                                                   LOOKBACK_STATS_ARGS);
  }
  // Output position of tile-local slot j holding digit d is scatterBase[d] + j.
  scatterBase[digit] = digitOffsets[digit] + exclusive - start;
#ifdef RADIX_DEBUG_LOOKBACK_STATS
  atomicAdd(&blockStats[0], wordsRead);  // shared atomics: the counting must not slow the pass
  atomicAdd(&blockStats[1], spins);
#endif
  __syncthreads();
#ifdef RADIX_DEBUG_LOOKBACK_STATS
  lookbackEndCycles = clock64();
#endif

  // Write out in slot order: consecutive threads write consecutive positions of one digit. Each
  // slot's digit is kept (a byte in shared memory rather than a register per item) for the values.
  const bool keysOut_ = (flags & FLAG_NO_KEYS_OUT) == 0;
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const uint32_t slot = i * THREADS + tid;
    const K key = exchangeKeys[slot];
    const uint32_t d = digitOf(key, shift);
    slotDigits[slot] = static_cast<uint8_t>(d);
    if (keysOut_ && slot < validInTile)
      keysOut[scatterBase[d] + slot] = static_cast<KOut>(key >> narrowShift);
  }
  __syncthreads();

  // Values follow their keys through the same exchange. They are read only now, which keeps the
  // registers of the ranking free (more blocks per multiprocessor).
  if (flags & FLAG_VALUES_IOTA) {
#pragma unroll
    for (int i = 0; i < ITEMS; ++i)
      exchangeVals[ranks.get(i)] = static_cast<uint32_t>(tileStart) + warpBase + i * WARP_THREADS;
  } else {
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
      const uint32_t position = warpBase + i * WARP_THREADS;
      exchangeVals[ranks.get(i)] = position < validInTile ? valsIn[tileStart + position] : 0;
    }
  }
  __syncthreads();
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const uint32_t slot = i * THREADS + tid;
    if (slot < validInTile) valsOut[scatterBase[slotDigits[slot]] + slot] = exchangeVals[slot];
  }
#ifdef RADIX_DEBUG_LOOKBACK_STATS
  if (tid == 0) {
    atomicAdd(&gLookbackStats[0], 1ull);
    atomicAdd(&gLookbackStats[1], blockStats[0]);
    atomicAdd(&gLookbackStats[2], blockStats[1]);
    atomicAdd(&gLookbackStats[3], lookbackStartCycles - blockStartCycles);
    atomicAdd(&gLookbackStats[4], lookbackEndCycles - lookbackStartCycles);
    atomicAdd(&gLookbackStats[5], clock64() - lookbackEndCycles);
  }
#endif
}

}  // namespace radix

extern "C" {

// Launch tuning the host reads with cuModuleGetGlobal: {hist threads, hist items, sweep threads
// u32, sweep items u32, sweep threads u64, sweep items u64}.
__device__ const uint32_t gpusort_radix_tuning[6] = {
    RADIX_HIST_THREADS,     RADIX_HIST_ITEMS,       RADIX_SWEEP_THREADS_32,
    RADIX_SWEEP_ITEMS_32,   RADIX_SWEEP_THREADS_64, RADIX_SWEEP_ITEMS_64};

// counts: 4 * 256 words, zeroed by the host. Any grid size; block RADIX_HIST_THREADS.
__global__ void __launch_bounds__(RADIX_HIST_THREADS)
    radix_histogram_u32(const uint32_t* keys, uint32_t n, uint32_t* counts) {
  radix::histogram<uint32_t, uint32_t, false>(keys, nullptr, n, counts);
}

// counts: 8 * 256 words, zeroed by the host.
__global__ void __launch_bounds__(RADIX_HIST_THREADS)
    radix_histogram_u64(const uint64_t* keys, uint32_t n, uint32_t* counts) {
  radix::histogram<uint64_t, uint64_t, false>(keys, nullptr, n, counts);
}

// Writes the high 32 bits of each word to keysOut and counts their 4 digits (4 * 256 words).
__global__ void __launch_bounds__(RADIX_HIST_THREADS)
    radix_narrow_histogram(const uint64_t* words, uint32_t* keysOut, uint32_t n,
                           uint32_t* counts) {
  radix::histogram<uint64_t, uint32_t, true>(words, keysOut, n, counts);
}

// One block of 256 threads per pass: offsets[p][d] = sum of counts[p][e] for e < d.
__global__ void __launch_bounds__(radix::RADIX)
    radix_scan(const uint32_t* counts, uint32_t* offsets) {
  __shared__ uint32_t warpSums[radix::RADIX / radix::WARP_THREADS];
  const uint32_t index = blockIdx.x * radix::RADIX + threadIdx.x;
  const uint32_t count = counts[index];
  const uint32_t inclusive = radix::warpInclusiveSum(count);
  const uint32_t warp = threadIdx.x / radix::WARP_THREADS;
  if (radix::laneId() == radix::WARP_THREADS - 1) warpSums[warp] = inclusive;
  __syncthreads();
  uint32_t prefix = 0;
  for (uint32_t w = 0; w < warp; ++w) prefix += warpSums[w];
  offsets[index] = prefix + inclusive - count;
}

// One block per tile of RADIX_SWEEP_THREADS_32 * RADIX_SWEEP_ITEMS_32 keys. digitOffsets: the
// 256 offsets of this pass; lookback: numTiles * 256 words; tileCounter: zeroed before the pass.
__global__ void __launch_bounds__(RADIX_SWEEP_THREADS_32, RADIX_SWEEP_MIN_BLOCKS_32)
    radix_onesweep_u32(const uint32_t* keysIn, uint32_t* keysOut, const uint32_t* valsIn,
                       uint32_t* valsOut, uint32_t n, uint32_t shift,
                       const uint32_t* digitOffsets, uint64_t* lookback, uint32_t* tileCounter,
                       uint32_t generation, uint32_t flags) {
  radix::onesweep<uint32_t>(keysIn, keysOut, valsIn, valsOut, n, shift, digitOffsets, lookback,
                            tileCounter, generation, flags);
}

__global__ void __launch_bounds__(RADIX_SWEEP_THREADS_64, RADIX_SWEEP_MIN_BLOCKS_64)
    radix_onesweep_u64(const uint64_t* keysIn, uint64_t* keysOut, const uint32_t* valsIn,
                       uint32_t* valsOut, uint32_t n, uint32_t shift,
                       const uint32_t* digitOffsets, uint64_t* lookback, uint32_t* tileCounter,
                       uint32_t generation, uint32_t flags) {
  radix::onesweep<uint64_t>(keysIn, keysOut, valsIn, valsOut, n, shift, digitOffsets, lookback,
                            tileCounter, generation, flags);
}

// A 64-bit pass that writes (key >> narrowShift) as 32-bit keys; tuning as radix_onesweep_u64.
__global__ void __launch_bounds__(RADIX_SWEEP_THREADS_64, RADIX_SWEEP_MIN_BLOCKS_64)
    radix_onesweep_u64_narrow(const uint64_t* keysIn, uint32_t* keysOut, const uint32_t* valsIn,
                              uint32_t* valsOut, uint32_t n, uint32_t shift,
                              const uint32_t* digitOffsets, uint64_t* lookback,
                              uint32_t* tileCounter, uint32_t generation, uint32_t flags,
                              uint32_t narrowShift) {
  radix::onesweep<uint64_t, uint32_t>(keysIn, keysOut, valsIn, valsOut, n, shift, digitOffsets,
                                      lookback, tileCounter, generation, flags, narrowShift);
}

// out[i] = column[perm[i]]: the next word of multi-word keys, in the order sorted so far.
__global__ void radix_gather_u64(const uint64_t* column, const uint32_t* perm, uint64_t* out,
                                 uint32_t n) {
  for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    out[i] = column[perm[i]];
  }
}

// keysOut[i] = high 32 bits of words[i]: keys of at most 32 significant bits.
__global__ void radix_narrow(const uint64_t* words, uint32_t* keysOut, uint32_t n) {
  for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    keysOut[i] = static_cast<uint32_t>(words[i] >> 32);
  }
}

}  // extern "C"
