// Odd-even hybrid sort of (key, 32-bit value) pairs, 32- and 64-bit unsigned keys, after "A
// Parallel Sorting Algorithm for GPGPU": split the input into tiles, sort every tile on the device
// with Batcher's odd-even merge sort, then merge sorted runs pairwise (merge path) until one run is
// left. The result equals a stable sort of the input by key. (Merging four runs a pass measured
// slower on the H200; spark-gpusort-examples/BENCHMARKS.md, and branch exp/oddeven-words.)
//
// Host sequence for n items, 1 <= n <= 2^31 - 9 (n == 0: launch nothing). Tuning: the 8 uint32
// of gpusort_oddeven_tuning, {SORT_THREADS, SORT_ITEMS, MERGE_THREADS, MERGE_ITEMS} for 32-bit
// keys, then the same four for 64-bit keys; with those of the key width,
// TILE = SORT_THREADS * SORT_ITEMS and MTILE = MERGE_THREADS * MERGE_ITEMS. Block sort and merge
// passes trap on other block sizes.
//   passes = number of doublings from run = TILE until run >= n (0 when n <= TILE).
//   Buffers out and tmp, n keys and n values each. The block sort writes to out when passes is
//   even and to tmp when it is odd; every pass writes to the other one, so the last ends in out.
//   1. oddeven_block_sort_{u32,u64}<<<ceil(n / TILE), SORT_THREADS>>>
//          (keysIn, valsIn or NULL, dstKeys, dstVals, n)
//      sorts each tile of TILE items. valsIn NULL: value = input position (iota).
//   2. tiles = ceil(n / MTILE);
//      for (run = TILE; run < n; run *= 2) {
//        oddeven_merge_partition_{u32,u64}<<<ceil((tiles + 1) / 256), 256>>>
//            (srcKeys, n, run, splits)
//        oddeven_merge_pass_{u32,u64}<<<tiles, MERGE_THREADS>>>
//            (srcKeys, srcVals, dstKeys, dstVals, n, run, splits)
//        swap(src, dst)
//      }
//   keysIn/valsIn may be the very buffers out or tmp (in place); out and tmp must not overlap.
//   splits: one buffer of tiles + 1 uint32 serves every pass (stream order).
//   Static shared memory only (no dynamic shared memory to set).
//
// splits: the pass for `run` merges runs A = [b, b + run) and B = [b + run, b + 2 run), both
// clipped to n, into [b, b + 2 run), for b = 0, 2 run, 4 run, ... Output tile i is positions
// [i MTILE, (i + 1) MTILE), inside one such pair since MTILE <= 2 TILE divides 2 run. splits[i],
// 0 <= i <= tiles, is the number of A items among the first d outputs of the pair holding position
// o = min(i MTILE, n), d = o - b: the merge-path split of diagonal d, equal keys taking A's items
// first (stable). A pair without B items is copied through. splits[tiles] is never read.
//
// Block sort: a tile's items are (key, position in the tile), ordered by both, so Batcher's
// network (not stable itself) yields the stable order; positions past n get the max key and sort
// last. The network's stages run in rounds: a thread holds ITEMS items spaced S apart in shared
// memory, runs the stages that stay within them in registers (compile-time indices), and writes
// them back (BlockSort). At the end each value is read by position (valsIn[tile start + position],
// or the position itself), so the result is stable whatever the values are.
#include <cstdint>

#include "merge_path.cuh"
#include "tuning.cuh"

namespace oddeven {

constexpr uint32_t kPartitionThreads = 256;

template <typename K>
struct Tuning;

template <>
struct Tuning<uint32_t> {
  static constexpr uint32_t SORT_THREADS = ODDEVEN_SORT_THREADS;
  static constexpr uint32_t SORT_ITEMS = ODDEVEN_SORT_ITEMS;
  static constexpr uint32_t MERGE_THREADS = ODDEVEN_MERGE_THREADS;
  static constexpr uint32_t MERGE_ITEMS = ODDEVEN_MERGE_ITEMS;
};

template <>
struct Tuning<uint64_t> {
  static constexpr uint32_t SORT_THREADS = ODDEVEN_SORT_THREADS_64;
  static constexpr uint32_t SORT_ITEMS = ODDEVEN_SORT_ITEMS_64;
  static constexpr uint32_t MERGE_THREADS = ODDEVEN_MERGE_THREADS_64;
  static constexpr uint32_t MERGE_ITEMS = ODDEVEN_MERGE_ITEMS_64;
};

// Shared with merge.cu (merge_path.cuh).
using mergepath::isPow2;
using mergepath::log2u;
using mergepath::mergePathSplit;
using mergepath::swizzle;
using mergepath::umin;

// ---------------------------------------------------------------------------------------------
// Items of the block sort: (key, position in the tile), compared as a pair.

template <typename K>
struct SortItem;

// 32-bit keys: key and position packed in one word, key high, so one 64-bit compare orders both.
template <>
struct SortItem<uint32_t> {
  static constexpr uint32_t TILE = Tuning<uint32_t>::SORT_THREADS * Tuning<uint32_t>::SORT_ITEMS;
  struct Elem {
    uint64_t word;
  };
  struct Smem {
    uint64_t word[TILE];
  };
  __host__ __device__ static __forceinline__ Elem make(uint32_t key, uint32_t pos) {
    return Elem{(static_cast<uint64_t>(key) << 32) | pos};
  }
  __host__ __device__ static __forceinline__ bool less(const Elem& a, const Elem& b) {
    return a.word < b.word;
  }
  __host__ __device__ static __forceinline__ uint32_t key(const Elem& a) {
    return static_cast<uint32_t>(a.word >> 32);
  }
  __host__ __device__ static __forceinline__ uint32_t pos(const Elem& a) {
    return static_cast<uint32_t>(a.word);
  }
  __host__ __device__ static __forceinline__ Elem lowest() { return Elem{0}; }
  __host__ __device__ static __forceinline__ Elem highest() { return Elem{~uint64_t(0)}; }
  __host__ __device__ static __forceinline__ Elem load(const Smem& s, uint32_t slot) {
    return Elem{s.word[slot]};
  }
  __host__ __device__ static __forceinline__ void store(Smem& s, uint32_t slot, const Elem& a) {
    s.word[slot] = a.word;
  }
};

template <>
struct SortItem<uint64_t> {
  static constexpr uint32_t TILE = Tuning<uint64_t>::SORT_THREADS * Tuning<uint64_t>::SORT_ITEMS;
  struct Elem {
    uint64_t key;
    uint32_t pos;
  };
  struct Smem {
    uint64_t key[TILE];
    uint32_t pos[TILE];
  };
  __host__ __device__ static __forceinline__ Elem make(uint64_t key, uint32_t pos) {
    return Elem{key, pos};
  }
  // One 96-bit compare: fewer instructions and registers than comparing key, then position.
  __host__ __device__ static __forceinline__ bool less(const Elem& a, const Elem& b) {
    return ((static_cast<unsigned __int128>(a.key) << 32) | a.pos) <
           ((static_cast<unsigned __int128>(b.key) << 32) | b.pos);
  }
  __host__ __device__ static __forceinline__ uint64_t key(const Elem& a) { return a.key; }
  __host__ __device__ static __forceinline__ uint32_t pos(const Elem& a) { return a.pos; }
  __host__ __device__ static __forceinline__ Elem lowest() { return Elem{0, 0}; }
  __host__ __device__ static __forceinline__ Elem highest() {
    return Elem{~uint64_t(0), ~uint32_t(0)};
  }
  __host__ __device__ static __forceinline__ Elem load(const Smem& s, uint32_t slot) {
    return Elem{s.key[slot], s.pos[slot]};
  }
  __host__ __device__ static __forceinline__ void store(Smem& s, uint32_t slot, const Elem& a) {
    s.key[slot] = a.key;
    s.pos[slot] = a.pos;
  }
};

template <typename Item>
__host__ __device__ __forceinline__ void compareExchange(typename Item::Elem& a,
                                                         typename Item::Elem& b) {
  const bool swap = Item::less(b, a);
  const typename Item::Elem lo = swap ? b : a;
  const typename Item::Elem hi = swap ? a : b;
  a = lo;
  b = hi;
}

// Whether Batcher's odd-even merge sort of n elements has comparator (x, x + k) in stage (p, k),
// p the length of the sorted runs being merged, k = p, p/2, ..., 1 (the usual iterative form):
// (x - k mod p) mod 2k < k, with x and x + k in the same block of 2p elements.
__host__ __device__ constexpr bool batcherPair(uint32_t n, uint32_t p, uint32_t k, uint32_t x) {
  return x + k < n && x >= k % p && (x - k % p) % (2 * k) < k && x / (2 * p) == (x + k) / (2 * p);
}

// Stages (p, k) of Batcher's network on N registers for p = 2^lpFirst .. 2^(lpEnd - 1).
template <typename Item, uint32_t N>
__host__ __device__ __forceinline__ void batcherLevels(typename Item::Elem (&e)[N],
                                                       int lpFirst, int lpEnd) {
#pragma unroll
  for (int lp = 0; lp < static_cast<int>(log2u(N)); ++lp) {
    if (lp < lpFirst || lp >= lpEnd) continue;
#pragma unroll
    for (int lk = static_cast<int>(log2u(N)) - 1; lk >= 0; --lk) {
      if (lk > lp) continue;
#pragma unroll
      for (uint32_t x = 0; x < N; ++x) {
        if (batcherPair(N, 1u << lp, 1u << lk, x)) {
          compareExchange<Item>(e[x], e[x + (1u << lk)]);
        }
      }
    }
  }
}

// The block sort of one tile (see the header comment). Thread t first sorts items
// [t ITEMS, (t + 1) ITEMS) in registers (the network's levels p < ITEMS). Level p (merging runs of
// p into runs of 2p, p >= ITEMS) has stages k = p, p/2, ..., 1, run in rounds:
//   Merge round, stages p .. S with S = 2p / ITEMS: restricted to the items x = r (mod S) of one
//   2p-block, these stages are exactly the last level of Batcher's network on those ITEMS items,
//   so the thread holding them (all of them, nobody else's) runs that level in registers.
//   Halo rounds, stages K .. S (K the largest stage left, S = max(1, 2K / ITEMS), H = K / S, at
//   most ITEMS / 2): restricted to x = r (mod S) and renumbered m = x div S, stage k is stage k/S
//   of the network (comparators (m, m + k/S) with m mod 2k/S >= k/S, inside the 2p-block), whose
//   comparators reach past a thread's run of ITEMS. The thread loads its run plus H items on each
//   side (the halo), runs the stages on that window, and keeps its run: a comparator changes its
//   run's items only through items within distance k of the run before stage k, all in the
//   window (see haloNetwork). A halo across a 2p-block boundary is replaced by lowest/highest
//   sentinels, which make its comparators with the run no-ops, as the network has none across
//   that boundary.
// Thread t holds subsequence r = t mod S, run c = t div S (consecutive threads, consecutive r), so
// every round's addresses are base | S * j with base and S * j sharing no bit.
template <typename K>
struct BlockSort {
  using Item = SortItem<K>;
  using Elem = typename Item::Elem;
  using Smem = typename Item::Smem;
  static constexpr uint32_t THREADS = Tuning<K>::SORT_THREADS;
  static constexpr uint32_t ITEMS = Tuning<K>::SORT_ITEMS;
  static constexpr uint32_t TILE = THREADS * ITEMS;
  static constexpr uint32_t LOG_ITEMS = log2u(ITEMS);
  static constexpr uint32_t LOG_TILE = log2u(TILE);

  static_assert(isPow2(THREADS) && THREADS <= 1024, "SORT_THREADS: a power of two, <= 1024");
  static_assert(isPow2(ITEMS) && ITEMS >= 2 && ITEMS <= 32, "SORT_ITEMS: a power of two, 2..32");
  static_assert(TILE >= 32, "the swizzle permutes within groups of 32 slots");
  static_assert(sizeof(Smem) <= 48 * 1024, "sort tile exceeds 48 KB of static shared memory");

  __host__ __device__ static __forceinline__ uint32_t slot(uint32_t e) {
    return swizzle<LOG_ITEMS>(e);
  }

  // d[j] = slot(stride * j), j < ITEMS, from the slots of stride's multiples by powers of two.
  __host__ __device__ static __forceinline__ void strideSlots(uint32_t stride,
                                                              uint32_t (&d)[ITEMS]) {
    d[0] = 0;
#pragma unroll
    for (uint32_t j = 1; j < ITEMS; ++j) {
      const uint32_t low = j & (0u - j);
      d[j] = d[j ^ low] ^ slot(stride * low);
    }
  }

  // Striped, coalesced load of the tile; position past n gets the max key.
  __host__ __device__ static __forceinline__ void loadTile(Smem& sm, const K* keysIn,
                                                           uint32_t base, uint32_t count,
                                                           uint32_t t) {
#pragma unroll
    for (uint32_t j = 0; j < ITEMS; ++j) {
      const uint32_t pos = j * THREADS + t;
      const K key = pos < count ? keysIn[base + pos] : ~K(0);
      Item::store(sm, slot(pos), Item::make(key, pos));
    }
  }

  // Batcher's network on the thread's own run of ITEMS (levels p < ITEMS), in registers.
  __host__ __device__ static __forceinline__ void sortRuns(Smem& sm, uint32_t t) {
    const uint32_t b = slot(t << LOG_ITEMS);
    Elem e[ITEMS];
#pragma unroll
    for (uint32_t j = 0; j < ITEMS; ++j) e[j] = Item::load(sm, b ^ j);
    batcherLevels<Item, ITEMS>(e, 0, LOG_ITEMS);
#pragma unroll
    for (uint32_t j = 0; j < ITEMS; ++j) Item::store(sm, b ^ j, e[j]);
  }

  // Stages p .. 2p / ITEMS of level p = 2^lgp: Batcher's last level on ITEMS items spaced S.
  __host__ __device__ static __forceinline__ void mergeRound(Smem& sm, uint32_t t, uint32_t lgp) {
    const uint32_t lgS = lgp + 1 - LOG_ITEMS;
    const uint32_t r = t & ((1u << lgS) - 1);
    const uint32_t block = t >> lgS;
    uint32_t d[ITEMS];
    strideSlots(1u << lgS, d);
    const uint32_t b = slot((block << (lgp + 1)) | r);
    Elem e[ITEMS];
#pragma unroll
    for (uint32_t j = 0; j < ITEMS; ++j) e[j] = Item::load(sm, b ^ d[j]);
    batcherLevels<Item, ITEMS>(e, LOG_ITEMS - 1, LOG_ITEMS);
#pragma unroll
    for (uint32_t j = 0; j < ITEMS; ++j) Item::store(sm, b ^ d[j], e[j]);
  }

  // Stages H, H/2, ..., 1 (renumbered, see above) on the window w = [halo H | run | halo H]; only
  // comparators that can change the run: (x, x + k) with x in [H - k, H + ITEMS). By induction
  // from the last stage, the items that still matter before stage k are [H - k, H + ITEMS + k).
  // Window index x is run position x - H, whose residue mod 2k is that of x + H (2k divides
  // ITEMS, and 2k divides H or equals 2H).
  template <uint32_t H>
  __host__ __device__ static __forceinline__ void haloNetwork(Elem (&w)[ITEMS + 2 * H]) {
#pragma unroll
    for (int lk = static_cast<int>(log2u(H)); lk >= 0; --lk) {
      const uint32_t k = 1u << lk;
#pragma unroll
      for (uint32_t x = 0; x < ITEMS + H; ++x) {
        if (x + k >= H && (x + H) % (2 * k) >= k) compareExchange<Item>(w[x], w[x + k]);
      }
    }
  }

  // One halo round: stages (H << lgS) .. (1 << lgS) of level 2^lgp. Contains a barrier (every
  // window is read before any run is written back); the caller adds the one after it.
  template <uint32_t H, class Sync>
  __host__ __device__ static __forceinline__ void haloRound(Smem& sm, uint32_t t, uint32_t lgp,
                                                            uint32_t lgS, Sync& sync) {
    const uint32_t r = t & ((1u << lgS) - 1);
    const uint32_t c = t >> lgS;
    const uint32_t runShift = lgS + LOG_ITEMS;     // x of the run's first item: (c << runShift) | r
    const uint32_t blockMask = (2u << lgp) - 1;    // positions within one 2p-block
    const bool hasLeft = ((c << runShift) & blockMask) != 0;
    const bool hasRight = (((c + 1) << runShift) & blockMask) != 0;
    uint32_t d[ITEMS];
    strideSlots(1u << lgS, d);
    const uint32_t mid = (c << runShift) | r;
    const uint32_t bm = slot(mid);
    // Neighbouring runs; masked so that an unused one (no neighbour) is still a valid slot.
    const uint32_t bl = slot((mid - (1u << runShift)) & (TILE - 1));
    const uint32_t br = slot((mid + (1u << runShift)) & (TILE - 1));
    Elem w[ITEMS + 2 * H];
#pragma unroll
    for (uint32_t i = 0; i < H; ++i) {
      w[i] = hasLeft ? Item::load(sm, bl ^ d[ITEMS - H + i]) : Item::lowest();
      w[H + ITEMS + i] = hasRight ? Item::load(sm, br ^ d[i]) : Item::highest();
    }
#pragma unroll
    for (uint32_t j = 0; j < ITEMS; ++j) w[H + j] = Item::load(sm, bm ^ d[j]);
    sync();
    haloNetwork<H>(w);
#pragma unroll
    for (uint32_t j = 0; j < ITEMS; ++j) Item::store(sm, bm ^ d[j], w[H + j]);
  }

  // haloRound<h> for the runtime h (uniform over the block), h a power of two <= H.
  template <uint32_t H, class Sync>
  __host__ __device__ static __forceinline__ void haloRoundFor(uint32_t h, Smem& sm, uint32_t t,
                                                               uint32_t lgp, uint32_t lgS,
                                                               Sync& sync) {
    if (h == H) {
      haloRound<H>(sm, t, lgp, lgS, sync);
    } else if constexpr (H > 1) {
      haloRoundFor<H / 2>(h, sm, t, lgp, lgS, sync);
    }
  }

  // Levels ITEMS .. TILE/2, each a merge round and its halo rounds, a barrier after each round.
  template <class Sync>
  __host__ __device__ static __forceinline__ void mergeLevels(Smem& sm, uint32_t t, Sync& sync) {
    for (uint32_t lgp = LOG_ITEMS; lgp < LOG_TILE; ++lgp) {
      mergeRound(sm, t, lgp);
      sync();
      // Stages left: 2^lgTop .. 1 (the merge round ended at stride 2p / ITEMS).
      int lgTop = static_cast<int>(lgp) - static_cast<int>(LOG_ITEMS);
      while (lgTop >= 0) {
        const int lgH = lgTop < static_cast<int>(LOG_ITEMS) - 1 ? lgTop
                                                                : static_cast<int>(LOG_ITEMS) - 1;
        const int lgS = lgTop - lgH;
        haloRoundFor<ITEMS / 2>(1u << lgH, sm, t, lgp, static_cast<uint32_t>(lgS), sync);
        sync();
        lgTop = lgS - 1;
      }
    }
  }

  // Striped, coalesced write of the tile's first count items and their values. The values are
  // all read before any is written: valsIn may be valsOut.
  template <class Sync>
  __host__ __device__ static __forceinline__ void storeTile(const Smem& sm, const uint32_t* valsIn,
                                                            K* keysOut, uint32_t* valsOut,
                                                            uint32_t base, uint32_t count,
                                                            uint32_t t, Sync& sync) {
    K keys[ITEMS];
    uint32_t vals[ITEMS];
#pragma unroll
    for (uint32_t j = 0; j < ITEMS; ++j) {
      const uint32_t pos = j * THREADS + t;
      const Elem e = Item::load(sm, slot(pos));
      keys[j] = Item::key(e);
      const uint32_t from = base + Item::pos(e);
      vals[j] = valsIn == nullptr ? from : (pos < count ? valsIn[from] : 0u);
    }
    if (valsIn != nullptr) sync();
#pragma unroll
    for (uint32_t j = 0; j < ITEMS; ++j) {
      const uint32_t pos = j * THREADS + t;
      if (pos < count) {
        keysOut[base + pos] = keys[j];
        valsOut[base + pos] = vals[j];
      }
    }
  }

  // One tile, run by all THREADS threads of a block; sync() is the block's barrier.
  template <class Sync>
  __host__ __device__ static __forceinline__ void run(const K* keysIn, const uint32_t* valsIn,
                                                      K* keysOut, uint32_t* valsOut, uint32_t n,
                                                      uint32_t tile, uint32_t t, Smem& sm,
                                                      Sync& sync) {
    const uint32_t base = tile * TILE;
    const uint32_t count = umin(TILE, n - base);
    loadTile(sm, keysIn, base, count, t);
    sync();
    sortRuns(sm, t);
    sync();
    mergeLevels(sm, t, sync);
    storeTile(sm, valsIn, keysOut, valsOut, base, count, t, sync);
  }
};

// ---------------------------------------------------------------------------------------------
// Merge passes.

// The pair of runs holding output position o (< n, or == n for the end), for run length `run`.
struct RunPair {
  uint32_t aStart, aLen, bStart, bLen;

  __host__ __device__ __forceinline__ RunPair(uint32_t o, uint32_t n, uint32_t run) {
    aStart = o & ~(2 * run - 1);  // 2 run <= 2^31: run < n <= 2^31 - 9 for every pass
    aLen = umin(run, n - aStart);
    bStart = aStart + aLen;
    bLen = umin(run, n - bStart);
  }
};

template <typename K>
__host__ __device__ __forceinline__ void partitionOne(const K* keys, uint32_t n, uint32_t run,
                                                      uint32_t* splits, uint32_t i) {
  constexpr uint32_t MTILE = Tuning<K>::MERGE_THREADS * Tuning<K>::MERGE_ITEMS;
  const uint32_t tiles = (n + MTILE - 1) / MTILE;
  if (i > tiles) return;
  const uint32_t o = umin(i * MTILE, n);
  const RunPair pair(o, n, run);
  const K* a = keys + pair.aStart;
  const K* b = keys + pair.bStart;
  splits[i] = mergePathSplit<K>(
      o - pair.aStart, pair.aLen, pair.bLen, [a](uint32_t j) { return a[j]; },
      [b](uint32_t j) { return b[j]; });
}

template <typename K>
struct MergePass {
  static constexpr uint32_t THREADS = Tuning<K>::MERGE_THREADS;
  static constexpr uint32_t ITEMS = Tuning<K>::MERGE_ITEMS;
  static constexpr uint32_t TILE = THREADS * ITEMS;
  static constexpr uint32_t LOG_ITEMS = log2u(ITEMS);

  static_assert(isPow2(THREADS) && THREADS <= 1024, "MERGE_THREADS: a power of two, <= 1024");
  static_assert(isPow2(ITEMS) && ITEMS >= 2, "MERGE_ITEMS: a power of two, >= 2");
  static_assert(TILE >= 32, "the swizzle permutes within groups of 32 slots");
  static_assert(TILE <= 2 * BlockSort<K>::TILE, "a merge tile must not straddle two pairs of runs");

  // The tile's A part, then its B part, at merged-tile index i (A: i < aCount).
  struct Smem {
    K key[TILE];
    uint32_t val[TILE];
  };
  static_assert(sizeof(Smem) <= 48 * 1024, "merge tile exceeds 48 KB of static shared memory");

  __host__ __device__ static __forceinline__ uint32_t slot(uint32_t e) {
    return swizzle<LOG_ITEMS>(e);
  }

  // Output tile `tile` of the pass; sync() is the block's barrier.
  template <class Sync>
  __host__ __device__ static __forceinline__ void run(const K* keysIn, const uint32_t* valsIn,
                                                      K* keysOut, uint32_t* valsOut, uint32_t n,
                                                      uint32_t runLen, const uint32_t* splits,
                                                      uint32_t tile, uint32_t t, Smem& sm,
                                                      Sync& sync) {
    const uint32_t outStart = tile * TILE;
    const RunPair pair(outStart, n, runLen);
    const uint32_t pairEnd = pair.bStart + pair.bLen;
    const bool lastOfPair = pairEnd - outStart <= TILE;
    const uint32_t total = lastOfPair ? pairEnd - outStart : TILE;
    const uint32_t a0 = splits[tile];
    const uint32_t a1 = lastOfPair ? pair.aLen : splits[tile + 1];
    const uint32_t aCount = a1 - a0;
    const uint32_t bCount = total - aCount;
    const uint32_t aFrom = pair.aStart + a0;
    const uint32_t bFrom = pair.bStart + (outStart - pair.aStart - a0) - aCount;

#pragma unroll
    for (uint32_t j = 0; j < ITEMS; ++j) {
      const uint32_t i = j * THREADS + t;
      if (i < total) {
        const uint32_t from = i < aCount ? aFrom + i : bFrom + i;
        sm.key[slot(i)] = keysIn[from];
        sm.val[slot(i)] = valsIn[from];
      }
    }
    sync();

    // This thread's ITEMS outputs start at diagonal d of the tile's A and B.
    const uint32_t d = umin(t * ITEMS, total);
    const K* key = sm.key;
    uint32_t ai = mergePathSplit<K>(
        d, aCount, bCount, [key](uint32_t j) { return key[slot(j)]; },
        [key, aCount](uint32_t j) { return key[slot(aCount + j)]; });
    uint32_t bi = aCount + d - ai;  // tile index of the next B item
    constexpr uint32_t LAST = TILE - 1;
    K ka = key[slot(umin(ai, LAST))];
    K kb = key[slot(umin(bi, LAST))];
    K outKey[ITEMS];
    uint32_t outVal[ITEMS];
#pragma unroll
    for (uint32_t j = 0; j < ITEMS; ++j) {
      // Past the tile's end both are exhausted; what is then read is never written out.
      const bool takeA = ai < aCount && (bi >= total || ka <= kb);
      const uint32_t from = takeA ? ai : bi;
      outKey[j] = takeA ? ka : kb;
      outVal[j] = sm.val[slot(umin(from, LAST))];
      ai += takeA ? 1 : 0;
      bi += takeA ? 0 : 1;
      const K next = key[slot(umin(takeA ? ai : bi, LAST))];
      ka = takeA ? next : ka;
      kb = takeA ? kb : next;
    }
    sync();
#pragma unroll
    for (uint32_t j = 0; j < ITEMS; ++j) {
      sm.key[slot(t * ITEMS + j)] = outKey[j];
      sm.val[slot(t * ITEMS + j)] = outVal[j];
    }
    sync();
#pragma unroll
    for (uint32_t j = 0; j < ITEMS; ++j) {
      const uint32_t i = j * THREADS + t;
      if (i < total) {
        keysOut[outStart + i] = sm.key[slot(i)];
        valsOut[outStart + i] = sm.val[slot(i)];
      }
    }
  }
};

struct BlockBarrier {
  __device__ __forceinline__ void operator()() const { __syncthreads(); }
};

template <typename K>
__device__ __forceinline__ void blockSortKernel(const K* keysIn, const uint32_t* valsIn,
                                                K* keysOut, uint32_t* valsOut, uint32_t n) {
  if (blockDim.x != BlockSort<K>::THREADS) __trap();  // launched with another tuning
  __shared__ typename BlockSort<K>::Smem sm;
  BlockBarrier sync;
  BlockSort<K>::run(keysIn, valsIn, keysOut, valsOut, n, blockIdx.x, threadIdx.x, sm, sync);
}

template <typename K>
__device__ __forceinline__ void mergePassKernel(const K* keysIn, const uint32_t* valsIn,
                                                K* keysOut, uint32_t* valsOut, uint32_t n,
                                                uint32_t run, const uint32_t* splits) {
  if (blockDim.x != MergePass<K>::THREADS) __trap();
  __shared__ typename MergePass<K>::Smem sm;
  BlockBarrier sync;
  MergePass<K>::run(keysIn, valsIn, keysOut, valsOut, n, run, splits, blockIdx.x, threadIdx.x,
                    sm, sync);
}

}  // namespace oddeven

// [0..3] {SORT_THREADS, SORT_ITEMS, MERGE_THREADS, MERGE_ITEMS} for 32-bit keys, [4..7] the same
// for 64-bit keys.
// extern "C" outside a braced block: external linkage, so the const table is kept and visible.
extern "C" __device__ const uint32_t gpusort_oddeven_tuning[8] = {
    ODDEVEN_SORT_THREADS,    ODDEVEN_SORT_ITEMS,       ODDEVEN_MERGE_THREADS,
    ODDEVEN_MERGE_ITEMS,     ODDEVEN_SORT_THREADS_64,  ODDEVEN_SORT_ITEMS_64,
    ODDEVEN_MERGE_THREADS_64, ODDEVEN_MERGE_ITEMS_64};

extern "C" {

// Block sort: at least two blocks per SM (for 256 threads that caps registers at 128), so that
// one computes while the other waits at a barrier.
__global__ void __launch_bounds__(ODDEVEN_SORT_THREADS, ODDEVEN_SORT_THREADS <= 256 ? 2 : 1)
    oddeven_block_sort_u32(const uint32_t* keys_in, const uint32_t* vals_in, uint32_t* keys_out,
                           uint32_t* vals_out, uint32_t n) {
  oddeven::blockSortKernel<uint32_t>(keys_in, vals_in, keys_out, vals_out, n);
}

__global__ void __launch_bounds__(ODDEVEN_SORT_THREADS_64, ODDEVEN_SORT_THREADS_64 <= 256 ? 2 : 1)
    oddeven_block_sort_u64(const uint64_t* keys_in, const uint32_t* vals_in, uint64_t* keys_out,
                           uint32_t* vals_out, uint32_t n) {
  oddeven::blockSortKernel<uint64_t>(keys_in, vals_in, keys_out, vals_out, n);
}

__global__ void __launch_bounds__(oddeven::kPartitionThreads)
    oddeven_merge_partition_u32(const uint32_t* __restrict__ keys, uint32_t n, uint32_t run,
                                uint32_t* __restrict__ splits) {
  oddeven::partitionOne<uint32_t>(keys, n, run, splits, blockIdx.x * blockDim.x + threadIdx.x);
}

__global__ void __launch_bounds__(oddeven::kPartitionThreads)
    oddeven_merge_partition_u64(const uint64_t* __restrict__ keys, uint32_t n, uint32_t run,
                                uint32_t* __restrict__ splits) {
  oddeven::partitionOne<uint64_t>(keys, n, run, splits, blockIdx.x * blockDim.x + threadIdx.x);
}

__global__ void __launch_bounds__(ODDEVEN_MERGE_THREADS)
    oddeven_merge_pass_u32(const uint32_t* __restrict__ keys_in,
                           const uint32_t* __restrict__ vals_in, uint32_t* __restrict__ keys_out,
                           uint32_t* __restrict__ vals_out, uint32_t n, uint32_t run,
                           const uint32_t* __restrict__ splits) {
  oddeven::mergePassKernel<uint32_t>(keys_in, vals_in, keys_out, vals_out, n, run, splits);
}

__global__ void __launch_bounds__(ODDEVEN_MERGE_THREADS_64)
    oddeven_merge_pass_u64(const uint64_t* __restrict__ keys_in,
                           const uint32_t* __restrict__ vals_in, uint64_t* __restrict__ keys_out,
                           uint32_t* __restrict__ vals_out, uint32_t n, uint32_t run,
                           const uint32_t* __restrict__ splits) {
  oddeven::mergePassKernel<uint64_t>(keys_in, vals_in, keys_out, vals_out, n, run, splits);
}

}  // extern "C"
