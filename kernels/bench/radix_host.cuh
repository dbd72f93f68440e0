// Host sequence of the radix sort (radix.cu's header comment), with the CUDA runtime API, for the
// benchmark harness. The Java engine (io.gpusort.engine.cuda.RadixSorter) runs the same sequence
// through the driver API.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

namespace radixhost {

__global__ void fillIota(uint32_t* values, uint32_t n) {
  for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += uint64_t(gridDim.x) * blockDim.x)
    values[i] = static_cast<uint32_t>(i);
}

struct Tuning {
  uint32_t histThreads, histItems, sweepThreads32, sweepItems32, sweepThreads64, sweepItems64;
};

inline Tuning readTuning() {
  uint32_t t[6];
  cudaMemcpyFromSymbol(t, gpusort_radix_tuning, sizeof(t));
  return {t[0], t[1], t[2], t[3], t[4], t[5]};
}

// Device scratch of one sort: counts and offsets of every pass, per-pass tile counters, and the
// look-back words (zeroed once here; generations keep passes apart afterwards).
struct Scratch {
  uint32_t* counts = nullptr;   // 8 * 256
  uint32_t* offsets = nullptr;  // 8 * 256
  uint32_t* tileCounters = nullptr;
  uint64_t* lookback = nullptr;
  uint64_t lookbackTiles = 0;
  uint32_t generation = 0;

  cudaError_t init(uint64_t maxTiles) {
    cudaError_t e;
    if ((e = cudaMalloc(&counts, 8 * 256 * 4)) != cudaSuccess) return e;
    if ((e = cudaMalloc(&offsets, 8 * 256 * 4)) != cudaSuccess) return e;
    if ((e = cudaMalloc(&tileCounters, 8 * 4)) != cudaSuccess) return e;
    if ((e = cudaMalloc(&lookback, maxTiles * 256 * 8)) != cudaSuccess) return e;
    lookbackTiles = maxTiles;
    return cudaMemset(lookback, 0, maxTiles * 256 * 8);
  }
  void release() {
    cudaFree(counts);
    cudaFree(offsets);
    cudaFree(tileCounters);
    cudaFree(lookback);
  }
};

// The kernels and tuning of one key width.
template <typename K>
struct Kernels;

template <>
struct Kernels<uint32_t> {
  static constexpr int PASSES = 4;
  static constexpr auto histogram = radix_histogram_u32;
  static constexpr auto sweep = radix_onesweep_u32;
  static uint32_t tile(const Tuning& t) { return t.sweepThreads32 * t.sweepItems32; }
  static uint32_t threads(const Tuning& t) { return t.sweepThreads32; }
};

template <>
struct Kernels<uint64_t> {
  static constexpr int PASSES = 8;
  static constexpr auto histogram = radix_histogram_u64;
  static constexpr auto sweep = radix_onesweep_u64;
  static uint32_t tile(const Tuning& t) { return t.sweepThreads64 * t.sweepItems64; }
  static uint32_t threads(const Tuning& t) { return t.sweepThreads64; }
};

inline uint64_t tilesFor(uint32_t n, uint32_t tile) { return (uint64_t(n) + tile - 1) / tile; }

// Sorts (keysIn, valsIn or iota) into (keysOut, valsOut); keysTmp/valsTmp are the ping-pong
// buffers. Returns the number of digit passes run (constant digits skipped) in *passesRun.
template <typename K>
cudaError_t sortPairs(const Tuning& t, Scratch& s, int numSms, const K* keysIn,
                      const uint32_t* valsIn, K* keysOut, uint32_t* valsOut, K* keysTmp,
                      uint32_t* valsTmp, uint32_t n, bool writeKeys, cudaStream_t stream,
                      int* passesRun) {
  using Ks = Kernels<K>;
  constexpr int PASSES = Ks::PASSES;
  cudaError_t e;
  *passesRun = 0;
  if (n == 0) return cudaSuccess;
  if ((e = cudaMemsetAsync(s.counts, 0, PASSES * 256 * 4, stream)) != cudaSuccess) return e;
  const uint64_t histTiles = tilesFor(n, t.histThreads * t.histItems);
  const int histGrid = static_cast<int>(std::min<uint64_t>(histTiles, uint64_t(numSms) * 8));
  Ks::histogram<<<histGrid, t.histThreads, 0, stream>>>(keysIn, n, s.counts);
  radix_scan<<<PASSES, 256, 0, stream>>>(s.counts, s.offsets);
  if ((e = cudaGetLastError()) != cudaSuccess) return e;
  uint32_t counts[PASSES * 256];
  if ((e = cudaMemcpyAsync(counts, s.counts, sizeof(counts), cudaMemcpyDeviceToHost, stream)) !=
      cudaSuccess)
    return e;
  if ((e = cudaStreamSynchronize(stream)) != cudaSuccess) return e;
  std::vector<int> passes;
  for (int p = 0; p < PASSES; ++p) {
    bool constant = false;
    for (int d = 0; d < 256; ++d) constant |= counts[p * 256 + d] == n;
    if (!constant) passes.push_back(p);
  }
  const int numPasses = static_cast<int>(passes.size());
  *passesRun = numPasses;
  if (numPasses == 0) {
    if (writeKeys &&
        (e = cudaMemcpyAsync(keysOut, keysIn, sizeof(K) * n, cudaMemcpyDeviceToDevice, stream)) !=
            cudaSuccess)
      return e;
    if (valsIn != nullptr)
      return cudaMemcpyAsync(valsOut, valsIn, 4ull * n, cudaMemcpyDeviceToDevice, stream);
    fillIota<<<1024, 256, 0, stream>>>(valsOut, n);
    return cudaGetLastError();
  }
  // 64-bit keys whose remaining digits fit in 32 bits move as 32-bit keys from then on: the pass
  // before the first such digit writes (key >> narrowShift). Only when sorted keys are not wanted.
  int narrowAt = -1;
  uint32_t narrowShift = 0;
  if (sizeof(K) == 8 && !writeKeys && numPasses >= 2) {
    int j = 0;
    while ((passes[numPasses - 1] + 1 - passes[j]) * 8 > 32) ++j;
    narrowAt = j > 0 ? j - 1 : 0;
    narrowShift = passes[j] * 8;
  }
  const uint64_t tiles = tilesFor(n, Ks::tile(t));
  const uint64_t tiles32 = tilesFor(n, t.sweepThreads32 * t.sweepItems32);
  if (std::max(tiles, tiles32) > s.lookbackTiles) return cudaErrorInvalidValue;
  if ((e = cudaMemsetAsync(s.tileCounters, 0, 8 * 4, stream)) != cudaSuccess) return e;
  const void* srcKeys = keysIn;
  const uint32_t* srcVals = valsIn;
  for (int k = 0; k < numPasses; ++k) {
    // The last pass lands in keysOut/valsOut; earlier ones alternate between tmp and out.
    const bool toOut = (numPasses - 1 - k) % 2 == 0;
    void* dstKeys = toOut ? (void*)keysOut : (void*)keysTmp;
    uint32_t* dstVals = toOut ? valsOut : valsTmp;
    uint32_t flags = 0;
    if (k == 0 && valsIn == nullptr) flags |= 1;
    if (k == numPasses - 1 && !writeKeys) flags |= 2;
    s.generation = s.generation + 1;
    const int p = passes[k];
    const uint32_t* offsets = s.offsets + p * 256;
    if (narrowAt >= 0 && k > narrowAt) {
      radix_onesweep_u32<<<static_cast<int>(tiles32), t.sweepThreads32, 0, stream>>>(
          (const uint32_t*)srcKeys, (uint32_t*)dstKeys, srcVals, dstVals, n, p * 8 - narrowShift,
          offsets, s.lookback, s.tileCounters + k, s.generation, flags);
    } else if (k == narrowAt) {
      radix_onesweep_u64_narrow<<<static_cast<int>(tiles), t.sweepThreads64, 0, stream>>>(
          (const uint64_t*)srcKeys, (uint32_t*)dstKeys, srcVals, dstVals, n, p * 8, offsets,
          s.lookback, s.tileCounters + k, s.generation, flags, narrowShift);
    } else {
      Ks::sweep<<<static_cast<int>(tiles), Ks::threads(t), 0, stream>>>(
          (const K*)srcKeys, (K*)dstKeys, srcVals, dstVals, n, p * 8, offsets, s.lookback,
          s.tileCounters + k, s.generation, flags);
    }
    if ((e = cudaGetLastError()) != cudaSuccess) return e;
    srcKeys = dstKeys;
    srcVals = dstVals;
  }
  return cudaSuccess;
}

}  // namespace radixhost
