// Benchmark and check harness: times CUB's DeviceRadixSort and this project's kernels on the same
// device-resident inputs in one run, and checks every result of ours against CUB's (both sorts
// are stable, so keys and values must match exactly).
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -o sort_bench sort_bench.cu
//   ./sort_bench [--sizes 1e7,1e8,1e9] [--reps 5] [--check-only] [--no-oddeven] [--no-radix]
//
// Prints one line per case and a table last. Exit code 1 when any check fails.
#include <cub/device/device_radix_sort.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../cuda/radix.cu"
#include "radix_host.cuh"
#ifndef NO_ODDEVEN
#include "../cuda/oddeven.cu"
#include "oddeven_host.cuh"
#endif

#include "bench_check.cuh"

namespace {

enum class Dist { RANDOM, BITS40, FEW, SORTED, REVERSE, EQUAL };

const char* distName(Dist d) {
  switch (d) {
    case Dist::RANDOM: return "random";
    case Dist::BITS40: return "40-bit";
    case Dist::FEW: return "16-distinct";
    case Dist::SORTED: return "sorted";
    case Dist::REVERSE: return "reverse";
    case Dist::EQUAL: return "all-equal";
  }
  return "?";
}

__device__ uint64_t mix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

template <typename K>
__global__ void fillKeys(K* keys, uint32_t n, int dist, uint64_t seed) {
  for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += uint64_t(gridDim.x) * blockDim.x) {
    const uint64_t r = mix64(seed ^ mix64(i));
    uint64_t v;
    switch (static_cast<Dist>(dist)) {
      case Dist::RANDOM: v = r; break;
      case Dist::BITS40: v = r & ((1ull << 40) - 1); break;
      case Dist::FEW: v = (r & 15) * 0x0101010101010101ull; break;
      case Dist::SORTED: v = sizeof(K) == 4 ? i : i * 0x10001ull; break;
      case Dist::REVERSE: v = ~(sizeof(K) == 4 ? i : i * 0x10001ull); break;
      default: v = 0x1234567890abcdefull; break;
    }
    keys[i] = static_cast<K>(v);
  }
}

__global__ void iota(uint32_t* vals, uint32_t n) {
  for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += uint64_t(gridDim.x) * blockDim.x)
    vals[i] = static_cast<uint32_t>(i);
}

template <typename T>
__global__ void countMismatches(const T* a, const T* b, uint32_t n, unsigned long long* count) {
  unsigned long long local = 0;
  for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += uint64_t(gridDim.x) * blockDim.x)
    local += a[i] != b[i];
  if (local) atomicAdd(count, local);
}

template <typename T>
__global__ void poison(T* a, uint32_t n) {
  for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += uint64_t(gridDim.x) * blockDim.x)
    a[i] = static_cast<T>(0x5a5a5a5a5a5a5a5aull);
}

template <typename T>
uint64_t mismatches(const T* a, const T* b, uint32_t n) {
  unsigned long long* d;
  CHECK(cudaMalloc(&d, 8));
  CHECK(cudaMemset(d, 0, 8));
  if (n) countMismatches<<<1024, 256>>>(a, b, n, d);
  CHECK(cudaGetLastError());
  unsigned long long h;
  CHECK(cudaMemcpy(&h, d, 8, cudaMemcpyDeviceToHost));
  CHECK(cudaFree(d));
  return h;
}

struct Row {
  std::string keyType, dist, impl;
  uint32_t n;
  double ms, ratio;
  int passes;
  bool ok;
};

std::vector<Row> rows;
bool allOk = true;

template <typename F>
double medianMs(int reps, F&& run) {
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  run();  // warm-up
  CHECK(cudaDeviceSynchronize());
  std::vector<float> times;
  for (int r = 0; r < reps; ++r) {
    CHECK(cudaEventRecord(a));
    run();
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    float ms;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    times.push_back(ms);
  }
  CHECK(cudaEventDestroy(a));
  CHECK(cudaEventDestroy(b));
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

template <typename K>
void runCase(const char* keyType, Dist dist, uint32_t n, int reps, bool timed, bool withRadix,
             bool withOddeven,
             const radixhost::Tuning& tuning, radixhost::Scratch& scratch, int numSms) {
  K *keysIn, *cubKeys, *ourKeys, *tmpKeys;
  uint32_t *valsIn, *cubVals, *ourVals, *tmpVals, *splits;
  const size_t nk = std::max<size_t>(n, 1);
  CHECK(cudaMalloc(&keysIn, nk * sizeof(K)));
  CHECK(cudaMalloc(&cubKeys, nk * sizeof(K)));
  CHECK(cudaMalloc(&ourKeys, nk * sizeof(K)));
  CHECK(cudaMalloc(&tmpKeys, nk * sizeof(K)));
  CHECK(cudaMalloc(&valsIn, nk * 4));
  CHECK(cudaMalloc(&cubVals, nk * 4));
  CHECK(cudaMalloc(&ourVals, nk * 4));
  CHECK(cudaMalloc(&tmpVals, nk * 4));
#ifdef NO_ODDEVEN
  CHECK(cudaMalloc(&splits, 4));
#else
  CHECK(cudaMalloc(&splits, (oddevenSplitsCount(n) + 1) * 4));
#endif
  if (n) {
    fillKeys<K><<<1024, 256>>>(keysIn, n, static_cast<int>(dist), 0x5eed0000ull + n);
    iota<<<1024, 256>>>(valsIn, n);
  }
  CHECK(cudaGetLastError());

  size_t tempBytes = 0;
  CHECK(cub::DeviceRadixSort::SortPairs(nullptr, tempBytes, keysIn, cubKeys, valsIn, cubVals,
                                        n));
  void* temp;
  CHECK(cudaMalloc(&temp, std::max<size_t>(tempBytes, 1)));
  auto cub = [&] {
    CHECK(cub::DeviceRadixSort::SortPairs(temp, tempBytes, keysIn, cubKeys, valsIn, cubVals, n));
  };
  cub();
  CHECK(cudaDeviceSynchronize());
  const double cubMs = timed ? medianMs(reps, cub) : 0;
  const std::string dname = distName(dist);
  if (timed) rows.push_back({keyType, dname, "cub", n, cubMs, 1.0, int(sizeof(K)), true});
  if (timed && dist == Dist::BITS40) {
    auto cub40 = [&] {
      CHECK(cub::DeviceRadixSort::SortPairs(temp, tempBytes, keysIn, cubKeys, valsIn, cubVals, n,
                                            0, 40));
    };
    const double ms = medianMs(reps, cub40);
    rows.push_back({keyType, dname, "cub end_bit=40", n, ms, cubMs / ms, 5, true});
    cub();
    CHECK(cudaDeviceSynchronize());
  }

  auto check = [&](const char* impl, bool keysToo) {
    const uint64_t bad = (keysToo ? mismatches(ourKeys, cubKeys, n) : 0) +
                         mismatches(ourVals, cubVals, n);
    const bool ok = bad == 0;
    allOk &= ok;
    if (!ok || n >= 1000000)
      std::printf("%-4s %-11s n=%-10u %-16s %s %llu\n", keyType, dname.c_str(), n, impl,
                  ok ? "ok" : "MISMATCH", (unsigned long long)bad);
    return ok;
  };
  auto poisonOutputs = [&] {
    if (n) {
      poison<<<1024, 256>>>(ourKeys, n);
      poison<<<1024, 256>>>(ourVals, n);
    }
    CHECK(cudaDeviceSynchronize());
  };

  struct Variant {
    const char* name;
    bool iotaValues, writeKeys;
  };
  const Variant variants[] = {{"radix pairs", false, true},
                              {"radix iota", true, true},
                              {"radix perm-only", true, false}};
  for (const Variant& v : variants) {
    if (!withRadix) break;
    int passes = 0;
    const bool iotaValues = v.iotaValues;
    auto ours = [&] {
      CHECK(radixhost::sortPairs<K>(tuning, scratch, numSms, keysIn,
                                    iotaValues ? nullptr : valsIn, ourKeys, ourVals, tmpKeys,
                                    tmpVals, n, v.writeKeys, 0, &passes));
    };
    poisonOutputs();
    ours();
    CHECK(cudaDeviceSynchronize());
    bool ok = check(v.name, v.writeKeys);
#ifdef RADIX_DEBUG_LOOKBACK_STATS
    if (timed) {
      // One more run with the counters zeroed: per tile, look-back words read and read rounds that
      // stopped on an unpublished word; the share of a block's cycles (thread 0's clock) before,
      // in and after the look-back ("in" includes the wait for the block's other warps).
      unsigned long long zero[6] = {0, 0, 0, 0, 0, 0}, st[6];
      CHECK(cudaMemcpyToSymbol(radix::gLookbackStats, zero, sizeof(zero)));
      ours();
      CHECK(cudaDeviceSynchronize());
      CHECK(cudaMemcpyFromSymbol(st, radix::gLookbackStats, sizeof(st)));
      const double tiles = st[0] ? double(st[0]) : 1, cycles = double(st[3] + st[4] + st[5]);
      std::printf("lookback %-4s %-11s n=%-10u %-16s tiles %llu, words/digit %.2f, stalled "
                  "rounds/digit %.2f, cycles/block %.0f: before %.0f%%, in %.0f%%, after %.0f%%\n",
                  keyType, dname.c_str(), n, v.name, st[0], st[1] / tiles / 256,
                  st[2] / tiles / 256, cycles / tiles, 100 * st[3] / cycles,
                  100 * st[4] / cycles, 100 * st[5] / cycles);
    }
#endif
    if (timed) {
      const double ms = medianMs(reps, ours);
      ok &= check(v.name, v.writeKeys);
      rows.push_back({keyType, dname, v.name, n, ms, cubMs / ms, passes, ok});
    }
  }

#ifdef NO_ODDEVEN
  (void)withOddeven;
#else
  if (withOddeven) {
    auto oe = [&] {
      CHECK(oddevenSortPairs<K>(keysIn, nullptr, ourKeys, ourVals, tmpKeys, tmpVals, splits, n,
                                0));
    };
    poisonOutputs();
    oe();
    CHECK(cudaDeviceSynchronize());
    bool ok = check("oddeven", true);
    if (timed) {
      const double ms = medianMs(reps, oe);
      ok &= check("oddeven", true);
      rows.push_back({keyType, dname, "oddeven", n, ms, cubMs / ms, 0, ok});
    }
  }
#endif

  CHECK(cudaFree(temp));
  for (void* p : {(void*)keysIn, (void*)cubKeys, (void*)ourKeys, (void*)tmpKeys, (void*)valsIn,
                  (void*)cubVals, (void*)ourVals, (void*)tmpVals, (void*)splits})
    CHECK(cudaFree(p));
}

std::vector<uint32_t> parseSizes(const char* s) {
  std::vector<uint32_t> out;
  std::string str(s);
  size_t pos = 0;
  while (pos < str.size()) {
    size_t end = str.find(',', pos);
    if (end == std::string::npos) end = str.size();
    out.push_back(static_cast<uint32_t>(std::stod(str.substr(pos, end - pos))));
    pos = end + 1;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<uint32_t> sizes = {10000000u, 100000000u, 1000000000u};
  int reps = 5;
  bool checkOnly = false, withRadix = true, withOddeven = true, sweep = true;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--sizes") && i + 1 < argc) sizes = parseSizes(argv[++i]);
    else if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) reps = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--check-only")) checkOnly = true;
    else if (!std::strcmp(argv[i], "--no-oddeven")) withOddeven = false;
    else if (!std::strcmp(argv[i], "--no-radix")) withRadix = false;
    else if (!std::strcmp(argv[i], "--skip-sweep")) sweep = false;
    else {
      std::fprintf(stderr, "unknown argument %s\n", argv[i]);
      return 2;
    }
  }
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  int driver = 0;
  CHECK(cudaDriverGetVersion(&driver));
  std::printf("device %s, %d SMs, driver API %d\n", prop.name, prop.multiProcessorCount, driver);
  const radixhost::Tuning tuning = radixhost::readTuning();
  radixhost::Scratch scratch;
  uint32_t maxN = 1u << 20;
  for (uint32_t n : sizes) maxN = std::max(maxN, n);
  const uint32_t minTile = std::min(tuning.sweepThreads32 * tuning.sweepItems32,
                                    tuning.sweepThreads64 * tuning.sweepItems64);
  CHECK(scratch.init((uint64_t(maxN) + minTile - 1) / minTile));
  const int sms = prop.multiProcessorCount;

  // Correctness sweep: odd sizes and every distribution, both key widths.
  const uint32_t checkSizes[] = {1, 2, 3, 255, 3071, 3072, 3073, 4095, 4096, 4097, 65537,
                                 1000003, 3333333};
  const Dist dists[] = {Dist::RANDOM, Dist::BITS40, Dist::FEW, Dist::SORTED, Dist::REVERSE,
                        Dist::EQUAL};
  for (uint32_t n : checkSizes)
    for (Dist d : dists) {
      if (!sweep) break;
      runCase<uint32_t>("u32", d, n, 1, false, withRadix, withOddeven, tuning, scratch, sms);
      runCase<uint64_t>("u64", d, n, 1, false, withRadix, withOddeven, tuning, scratch, sms);
    }
  if (sweep) std::printf("correctness sweep: %s\n", allOk ? "PASS" : "FAIL");

  if (!checkOnly) {
    for (uint32_t n : sizes) {
      const int r = n >= 500000000u ? std::max(3, reps / 2) : reps;
      runCase<uint32_t>("u32", Dist::RANDOM, n, r, true, withRadix, withOddeven, tuning, scratch,
                        sms);
      runCase<uint64_t>("u64", Dist::RANDOM, n, r, true, withRadix, withOddeven, tuning, scratch,
                        sms);
      runCase<uint64_t>("u64", Dist::BITS40, n, r, true, withRadix, withOddeven, tuning, scratch,
                        sms);
    }
  }

  std::printf("\n| keys | input | n | implementation | median ms | G pairs/s | x CUB | passes | check |\n");
  std::printf("| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
  for (const Row& r : rows)
    std::printf("| %s | %s | %u | %s | %.3f | %.2f | %.2f | %d | %s |\n", r.keyType.c_str(),
                r.dist.c_str(), r.n, r.impl.c_str(), r.ms, r.ms > 0 ? r.n / r.ms / 1e6 : 0,
                r.ratio, r.passes, r.ok ? "ok" : "FAIL");
  scratch.release();
  std::printf("%s\n", allOk ? "ALL CHECKS PASS" : "SOME CHECKS FAILED");
  return allOk ? 0 : 1;
}
