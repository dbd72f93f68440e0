// Rows put in sorted order on the device: the gather that follows a key sort, so that the host
// reads its sorted rows front to back instead of through the permutation.
//
// Rows arrive as records in host pages, uploaded back to back into one device buffer: a record is
// an 8-byte length L (a multiple of 8) and L bytes of row, 8-aligned. Row r is named by its
// pointer, pointers[r] = page << 40 | offset within the page, and pageBase[page] is where that
// page starts in the device buffer. perm[i] is the row at sorted position i.
//
// Host sequence for n rows (the Java engine, CudaEngine.gatherRows, follows it):
//   1. rows_source: src[i] = byte offset in the device buffer of the record of row perm[i].
//   2. Rows of one record size R (all the same): rows_gather_fixed writes record i at i * R.
//      Otherwise: rows_record_bytes writes each sorted record's size (8 + L) into dst, and the
//      exclusive scan of dst (rows_scan_tiles, rows_scan_tile_sums, rows_scan_apply, in place)
//      turns sizes into output offsets; then rows_gather_var copies record i to dst[i].
//   3. The host downloads the output buffer, a stream of records in sorted order.
#include <cstdint>

namespace rows {

constexpr int OFFSET_BITS = 40;
constexpr uint64_t OFFSET_MASK = (uint64_t{1} << OFFSET_BITS) - 1;
constexpr int WARP_THREADS = 32;
constexpr uint32_t FULL_MASK = 0xffffffffu;
constexpr int SCAN_THREADS = 256;
constexpr int SCAN_ITEMS = 4;
constexpr int SCAN_TILE = SCAN_THREADS * SCAN_ITEMS;

__device__ __forceinline__ uint64_t warpInclusiveSum(uint64_t value) {
  const int lane = threadIdx.x & (WARP_THREADS - 1);
#pragma unroll
  for (int offset = 1; offset < WARP_THREADS; offset <<= 1) {
    const uint64_t other = __shfl_up_sync(FULL_MASK, value, offset);
    if (lane >= offset) value += other;
  }
  return value;
}

// The exclusive prefix of this thread's value over the block (SCAN_THREADS threads); total gets
// the block's sum. Every thread of the block must call it.
__device__ __forceinline__ uint64_t blockExclusiveSum(uint64_t value, uint64_t& total) {
  __shared__ uint64_t warpSums[SCAN_THREADS / WARP_THREADS];
  const int lane = threadIdx.x & (WARP_THREADS - 1);
  const int warp = threadIdx.x / WARP_THREADS;
  const uint64_t inclusive = warpInclusiveSum(value);
  if (lane == WARP_THREADS - 1) warpSums[warp] = inclusive;
  __syncthreads();
  uint64_t before = 0;
  total = 0;
#pragma unroll
  for (int w = 0; w < SCAN_THREADS / WARP_THREADS; ++w) {
    if (w < warp) before += warpSums[w];
    total += warpSums[w];
  }
  __syncthreads();
  return before + inclusive - value;
}

}  // namespace rows

extern "C" {

// src[i] = pageBase[page] + offset of pointers[perm[i]].
__global__ void rows_source(const uint64_t* pointers, const uint32_t* perm,
                            const uint64_t* pageBase, uint64_t* src, uint32_t n) {
  for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    const uint64_t p = pointers[perm[i]];
    src[i] = pageBase[p >> rows::OFFSET_BITS] + (p & rows::OFFSET_MASK);
  }
}

// Fixed-size records of recordWords 8-byte words: one thread per output word, so that writes are
// coalesced and every record's words are read by neighbouring threads.
__global__ void rows_gather_fixed(const uint64_t* in, const uint64_t* src, uint64_t* out,
                                  uint32_t n, uint32_t recordWords) {
  const uint64_t words = static_cast<uint64_t>(n) * recordWords;
  for (uint64_t w = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; w < words;
       w += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    const uint64_t i = w / recordWords;
    const uint64_t k = w - i * recordWords;
    out[w] = in[src[i] / 8 + k];
  }
}

// dst[i] = bytes of the record at sorted position i: its 8-byte length, then the row.
__global__ void rows_record_bytes(const uint64_t* in, const uint64_t* src, uint64_t* dst,
                                  uint32_t n) {
  for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    dst[i] = 8 + in[src[i] / 8];
  }
}

// Scan, step 1: tileSums[t] = sum of values[t * SCAN_TILE, (t + 1) * SCAN_TILE). One block per
// tile, SCAN_THREADS threads.
__global__ void __launch_bounds__(rows::SCAN_THREADS)
    rows_scan_tiles(const uint64_t* values, uint64_t* tileSums, uint32_t n) {
  const uint64_t base = static_cast<uint64_t>(blockIdx.x) * rows::SCAN_TILE;
  uint64_t sum = 0;
#pragma unroll
  for (int k = 0; k < rows::SCAN_ITEMS; ++k) {
    const uint64_t i = base + static_cast<uint64_t>(threadIdx.x) * rows::SCAN_ITEMS + k;
    if (i < n) sum += values[i];
  }
  uint64_t total;
  rows::blockExclusiveSum(sum, total);
  if (threadIdx.x == 0) tileSums[blockIdx.x] = total;
}

// Scan, step 2: tileSums becomes its exclusive prefix sum. One block of SCAN_THREADS threads.
__global__ void __launch_bounds__(rows::SCAN_THREADS)
    rows_scan_tile_sums(uint64_t* tileSums, uint32_t numTiles) {
  uint64_t carry = 0;
  for (uint32_t start = 0; start < numTiles; start += rows::SCAN_THREADS) {
    const uint32_t i = start + threadIdx.x;
    const uint64_t value = i < numTiles ? tileSums[i] : 0;
    uint64_t total;
    const uint64_t before = rows::blockExclusiveSum(value, total);
    if (i < numTiles) tileSums[i] = carry + before;
    carry += total;
  }
}

// Scan, step 3: values[i] becomes the sum of the values before i (in place). One block per tile.
__global__ void __launch_bounds__(rows::SCAN_THREADS)
    rows_scan_apply(uint64_t* values, const uint64_t* tileOffsets, uint32_t n) {
  const uint64_t base = static_cast<uint64_t>(blockIdx.x) * rows::SCAN_TILE
      + static_cast<uint64_t>(threadIdx.x) * rows::SCAN_ITEMS;
  uint64_t items[rows::SCAN_ITEMS];
  uint64_t sum = 0;
#pragma unroll
  for (int k = 0; k < rows::SCAN_ITEMS; ++k) {
    items[k] = base + k < n ? values[base + k] : 0;
    sum += items[k];
  }
  uint64_t total;
  uint64_t running = tileOffsets[blockIdx.x] + rows::blockExclusiveSum(sum, total);
#pragma unroll
  for (int k = 0; k < rows::SCAN_ITEMS; ++k) {
    if (base + k < n) values[base + k] = running;
    running += items[k];
  }
}

// Records of any size: one warp per record, its lanes over the record's 8-byte words.
__global__ void rows_gather_var(const uint64_t* in, const uint64_t* src, const uint64_t* dst,
                                uint64_t* out, uint32_t n) {
  const uint32_t lane = threadIdx.x & (rows::WARP_THREADS - 1);
  const uint64_t warps = static_cast<uint64_t>(gridDim.x) * blockDim.x / rows::WARP_THREADS;
  for (uint64_t i = (static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x)
           / rows::WARP_THREADS;
       i < n; i += warps) {
    const uint64_t from = src[i] / 8;
    const uint64_t to = dst[i] / 8;
    const uint64_t words = 1 + in[from] / 8;
    for (uint64_t k = lane; k < words; k += rows::WARP_THREADS) {
      out[to + k] = in[from + k];
    }
  }
}

}  // extern "C"
