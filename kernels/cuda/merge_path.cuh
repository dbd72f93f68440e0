// Device helpers shared by the merge-path kernels of oddeven.cu (merge passes over runs of one
// length) and merge.cu (the merge tree over runs of any length): small integer helpers, the
// shared-memory swizzle and the merge-path split.
#ifndef GPUSORT_MERGE_PATH_CUH
#define GPUSORT_MERGE_PATH_CUH

#include <cstdint>

namespace mergepath {

__host__ __device__ constexpr bool isPow2(uint32_t x) { return x != 0 && (x & (x - 1)) == 0; }

__host__ __device__ constexpr uint32_t log2u(uint32_t x) { return x <= 1 ? 0 : 1 + log2u(x >> 1); }

__host__ __device__ __forceinline__ uint32_t umin(uint32_t a, uint32_t b) { return a < b ? a : b; }

// Shared-memory slot of element e in an array whose threads hold 2^SHIFT consecutive elements
// (or elements spaced by any power of two, see oddeven.cu's BlockSort): XORs the 5 bank bits with
// the 5 bits above bit SHIFT. Invertible (bit i < 5 changes by bit i + SHIFT, which is higher) and
// linear over GF(2), so slot(base | off) = slot(base) ^ slot(off) when base and off share no bit.
// Every access pattern of these kernels (a warp reading element j of 32 consecutive threads' runs
// of 2^SHIFT, for any spacing, or 32 consecutive elements) then hits 32 different 4-byte banks,
// and each half-warp 16 different 8-byte banks.
template <uint32_t SHIFT>
__host__ __device__ __forceinline__ uint32_t swizzle(uint32_t e) {
  static_assert(SHIFT >= 1, "SHIFT 0 would not be invertible");
  return e ^ ((e >> SHIFT) & 31u);
}

// Merge-path split of diagonal d of A and B, ties to A: the number of A items among the first d
// outputs of the stable merge of A before B. a(j) and b(j) read the j-th key of each side.
template <typename K, class ReadA, class ReadB>
__host__ __device__ __forceinline__ uint32_t mergePathSplit(uint32_t d, uint32_t aLen,
                                                            uint32_t bLen, ReadA a, ReadB b) {
  uint32_t lo = d > bLen ? d - bLen : 0;
  uint32_t hi = umin(d, aLen);
  while (lo < hi) {
    const uint32_t mid = (lo + hi) >> 1;
    const K ka = a(mid);
    const K kb = b(d - 1 - mid);
    if (ka <= kb) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

}  // namespace mergepath

#endif  // GPUSORT_MERGE_PATH_CUH
