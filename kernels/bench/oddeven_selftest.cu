// Self-test of the odd-even hybrid sort (../cuda/oddeven.cu through oddeven_host.cuh) on the GPU
// host: every case is checked against std::stable_sort of (key, input position) on the CPU, keys
// and values, with the outputs poisoned before each run. Then, unless --no-perf, times 1e8 random
// pairs per key width (checked in O(n): keys ascending, each value an input position holding that
// key, positions ascending within equal keys).
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -o oddeven_selftest oddeven_selftest.cu
//   ./oddeven_selftest [--no-perf] [--seed S]
//
// One line per case; last line ODDEVEN SELFTEST PASS (exit 0) or ODDEVEN SELFTEST FAIL (exit 1).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../cuda/oddeven.cu"
#include "oddeven_host.cuh"

#define BENCH_CHECK_EXIT 1
#include "bench_check.cuh"

namespace {

enum class Dist { RANDOM, FEW, SORTED, REVERSE, EQUAL };
const Dist kDists[] = {Dist::RANDOM, Dist::FEW, Dist::SORTED, Dist::REVERSE, Dist::EQUAL};

const char* distName(Dist d) {
  switch (d) {
    case Dist::RANDOM: return "random";
    case Dist::FEW: return "16-distinct";
    case Dist::SORTED: return "sorted";
    case Dist::REVERSE: return "reverse";
    case Dist::EQUAL: return "all-equal";
  }
  return "?";
}

// How the sort is called: values NULL (iota, the engine's use) or given, and in place or not.
enum class Mode { IOTA, VALUES, IN_PLACE_OUT, IN_PLACE_TMP };

const char* modeName(Mode m) {
  switch (m) {
    case Mode::IOTA: return "iota";
    case Mode::VALUES: return "values";
    case Mode::IN_PLACE_OUT: return "in-place(out)";
    case Mode::IN_PLACE_TMP: return "in-place(tmp)";
  }
  return "?";
}

uint64_t splitmix(uint64_t& s) {
  uint64_t z = (s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

template <typename K>
std::vector<K> makeKeys(uint32_t n, Dist dist, uint64_t seed) {
  std::vector<K> keys(n);
  uint64_t s = seed;
  const int shift = sizeof(K) == 8 ? 24 : 0;  // 64-bit: sorted keys that use the high word too
  for (uint32_t i = 0; i < n; ++i) {
    switch (dist) {
      case Dist::RANDOM: keys[i] = static_cast<K>(splitmix(s)); break;
      case Dist::FEW: keys[i] = static_cast<K>(splitmix(s) & 15); break;
      case Dist::SORTED: keys[i] = static_cast<K>(static_cast<K>(i) << shift); break;
      case Dist::REVERSE: keys[i] = static_cast<K>(static_cast<K>(n - 1 - i) << shift); break;
      case Dist::EQUAL: keys[i] = static_cast<K>(0x5eed5eed5eed5eedull); break;
    }
  }
  return keys;
}

template <typename K>
struct DeviceBuffers {
  K *keysIn = nullptr, *keysOut = nullptr, *keysTmp = nullptr;
  uint32_t *valsIn = nullptr, *valsOut = nullptr, *valsTmp = nullptr, *splits = nullptr;
  size_t splitsCount = 0;
  explicit DeviceBuffers(uint32_t n) {
    const size_t nk = std::max<size_t>(n, 1);
    splitsCount = oddevenSplitsCount(n);
    CHECK(cudaMalloc(&keysIn, nk * sizeof(K)));
    CHECK(cudaMalloc(&keysOut, nk * sizeof(K)));
    CHECK(cudaMalloc(&keysTmp, nk * sizeof(K)));
    CHECK(cudaMalloc(&valsIn, nk * 4));
    CHECK(cudaMalloc(&valsOut, nk * 4));
    CHECK(cudaMalloc(&valsTmp, nk * 4));
    CHECK(cudaMalloc(&splits, splitsCount * 4));
  }
  ~DeviceBuffers() {
    cudaFree(keysIn);
    cudaFree(keysOut);
    cudaFree(keysTmp);
    cudaFree(valsIn);
    cudaFree(valsOut);
    cudaFree(valsTmp);
    cudaFree(splits);
  }
  void poison(uint32_t n) {
    const size_t nk = std::max<size_t>(n, 1);
    CHECK(cudaMemset(keysOut, 0xA5, nk * sizeof(K)));
    CHECK(cudaMemset(keysTmp, 0x5A, nk * sizeof(K)));
    CHECK(cudaMemset(valsOut, 0xA5, nk * 4));
    CHECK(cudaMemset(valsTmp, 0x5A, nk * 4));
    CHECK(cudaMemset(splits, 0xEE, splitsCount * 4));
  }
};

int failures = 0;

template <typename K>
void runCase(const char* keyType, uint32_t n, Dist dist, Mode mode, uint64_t seed,
             cudaStream_t stream) {
  const uint64_t caseSeed = seed ^ (uint64_t(n) * 0x9e3779b97f4a7c15ull) ^
                            (uint64_t(dist) << 56) ^ (uint64_t(mode) << 48) ^ sizeof(K);
  const std::vector<K> keys = makeKeys<K>(n, dist, caseSeed);
  std::vector<uint32_t> payload(n);
  uint64_t s = caseSeed + 1;
  for (uint32_t i = 0; i < n; ++i) payload[i] = static_cast<uint32_t>(splitmix(s));
  const bool iota = mode == Mode::IOTA;

  // Reference: stable sort of (key, input position) by key.
  struct Pair {
    K key;
    uint32_t pos;
  };
  std::vector<Pair> ref(n);
  for (uint32_t i = 0; i < n; ++i) ref[i] = Pair{keys[i], i};
  std::stable_sort(ref.begin(), ref.end(),
                   [](const Pair& a, const Pair& b) { return a.key < b.key; });

  DeviceBuffers<K> d(n);
  d.poison(n);
  const K* keysIn = d.keysIn;
  const uint32_t* valsIn = iota ? nullptr : d.valsIn;
  K* inKeys = d.keysIn;
  uint32_t* inVals = d.valsIn;
  if (mode == Mode::IN_PLACE_OUT) {
    inKeys = d.keysOut;
    inVals = d.valsOut;
  } else if (mode == Mode::IN_PLACE_TMP) {
    inKeys = d.keysTmp;
    inVals = d.valsTmp;
  }
  if (n) {
    CHECK(cudaMemcpy(inKeys, keys.data(), size_t(n) * sizeof(K), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(inVals, payload.data(), size_t(n) * 4, cudaMemcpyHostToDevice));
  }
  if (mode == Mode::IN_PLACE_OUT || mode == Mode::IN_PLACE_TMP) {
    keysIn = inKeys;
    valsIn = inVals;
  }
  CHECK(cudaDeviceSynchronize());  // poison and uploads ran on the default stream

  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  CHECK(cudaEventRecord(start, stream));
  CHECK(oddevenSortPairs<K>(keysIn, valsIn, d.keysOut, d.valsOut, d.keysTmp, d.valsTmp, d.splits,
                            n, stream));
  CHECK(cudaEventRecord(stop, stream));
  CHECK(cudaStreamSynchronize(stream));
  CHECK(cudaGetLastError());
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, start, stop));
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));

  std::vector<K> outKeys(n), inAfter;
  std::vector<uint32_t> outVals(n);
  if (n) {
    CHECK(cudaMemcpy(outKeys.data(), d.keysOut, size_t(n) * sizeof(K), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(outVals.data(), d.valsOut, size_t(n) * 4, cudaMemcpyDeviceToHost));
  }
  uint64_t bad = 0, firstBad = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t want = iota ? ref[i].pos : payload[ref[i].pos];
    if (outKeys[i] != ref[i].key || outVals[i] != want) {
      if (bad == 0) firstBad = i;
      ++bad;
    }
  }
  bool inputKept = true;
  if (n && (mode == Mode::IOTA || mode == Mode::VALUES)) {
    inAfter.resize(n);
    CHECK(cudaMemcpy(inAfter.data(), d.keysIn, size_t(n) * sizeof(K), cudaMemcpyDeviceToHost));
    inputKept = inAfter == keys;
  }
  const bool ok = bad == 0 && inputKept;
  if (!ok) ++failures;
  std::printf("%s %-4s %-11s %-13s n=%-10u passes=%-2u %9.3f ms", ok ? "ok  " : "FAIL", keyType,
              distName(dist), modeName(mode), n,
              oddeven::mergePasses(n, oddeven::Tuning<K>::SORT_THREADS * oddeven::Tuning<K>::SORT_ITEMS),
              ms);
  if (bad) {
    const uint32_t want = iota ? ref[firstBad].pos : payload[ref[firstBad].pos];
    std::printf("  %llu mismatches, first at %llu: got (%llu, %u) want (%llu, %u)",
                (unsigned long long)bad, (unsigned long long)firstBad,
                (unsigned long long)outKeys[firstBad], outVals[firstBad],
                (unsigned long long)ref[firstBad].key, want);
  }
  if (!inputKept) std::printf("  input keys modified");
  if (!ok) std::printf("  (case seed %llu, run with --seed %llu)", (unsigned long long)caseSeed,
                       (unsigned long long)seed);
  std::printf("\n");
  std::fflush(stdout);
}

__global__ void fillRandom(uint32_t* keys32, uint64_t* keys64, uint32_t n, uint64_t seed) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    uint64_t z = seed + (uint64_t(i) + 1) * 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    if (keys32) keys32[i] = static_cast<uint32_t>(z);
    if (keys64) keys64[i] = z;
  }
}

// Times sorts of n random pairs (iota values), median of reps, and checks the last result in O(n).
template <typename K>
void perfCase(const char* keyType, uint32_t n, int reps, uint64_t seed, cudaStream_t stream) {
  DeviceBuffers<K> d(n);
  uint32_t* keys32 = sizeof(K) == 4 ? reinterpret_cast<uint32_t*>(d.keysIn) : nullptr;
  uint64_t* keys64 = sizeof(K) == 8 ? reinterpret_cast<uint64_t*>(d.keysIn) : nullptr;
  fillRandom<<<1024, 256, 0, stream>>>(keys32, keys64, n, seed);
  CHECK(cudaGetLastError());
  d.poison(n);
  CHECK(cudaDeviceSynchronize());
  std::vector<float> times;
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  for (int r = 0; r <= reps; ++r) {  // the first run is a warm-up
    CHECK(cudaEventRecord(start, stream));
    CHECK(oddevenSortPairs<K>(d.keysIn, nullptr, d.keysOut, d.valsOut, d.keysTmp, d.valsTmp,
                              d.splits, n, stream));
    CHECK(cudaEventRecord(stop, stream));
    CHECK(cudaStreamSynchronize(stream));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    if (r > 0) times.push_back(ms);
  }
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  std::sort(times.begin(), times.end());
  const float ms = times[times.size() / 2];

  std::vector<K> in(n), out(n);
  std::vector<uint32_t> vals(n);
  CHECK(cudaMemcpy(in.data(), d.keysIn, size_t(n) * sizeof(K), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(out.data(), d.keysOut, size_t(n) * sizeof(K), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(vals.data(), d.valsOut, size_t(n) * 4, cudaMemcpyDeviceToHost));
  bool ok = true;
  for (uint32_t i = 0; i < n && ok; ++i) {
    ok = vals[i] < n && in[vals[i]] == out[i];
    if (ok && i > 0) ok = out[i - 1] < out[i] || (out[i - 1] == out[i] && vals[i - 1] < vals[i]);
  }
  if (!ok) ++failures;
  std::printf("%s perf %-4s random n=%-10u passes=%-2u median %8.3f ms of %d  %6.2f G pairs/s\n",
              ok ? "ok  " : "FAIL", keyType, n,
              oddeven::mergePasses(n, oddeven::Tuning<K>::SORT_THREADS * oddeven::Tuning<K>::SORT_ITEMS),
              ms, reps, n / (ms * 1e6));
  std::fflush(stdout);
}

template <typename K>
void runWidth(const char* keyType, uint64_t seed, cudaStream_t stream) {
  const uint32_t tile = oddeven::Tuning<K>::SORT_THREADS * oddeven::Tuning<K>::SORT_ITEMS;
  const uint32_t half = tile / 2;
  // Runs of every count up to 4 (tile + 1 .. 3 tile + 5), odd tails after full pairs (17 tile + 5,
  // 19 tile - 1, 32 tile + 5), odd and even pass counts, exact powers of two (16 tile, 33554433 one
  // past), and n at odd multiples of half a tile and one off.
  const uint32_t sizes[] = {0,           1,           2,           3,
                            tile - 1,    tile,        tile + 1,    2 * tile + 1,
                            3 * tile + 5, 4 * tile,   4 * tile + 1, 16 * tile,
                            16 * tile + 1, 17 * tile + 5, 18 * tile + 1, 19 * tile - 1, 32 * tile + 5,
                            5 * half - 1, 5 * half,   5 * half + 1, 64 * tile + 3 * half + 1,
                            1000003,     10000000,    33554433};
  for (uint32_t n : sizes)
    for (Dist dist : kDists) runCase<K>(keyType, n, dist, Mode::IOTA, seed, stream);
  // Given values and in-place calls, on a few sizes (odd and even pass counts).
  const uint32_t more[] = {5, tile + 1, 2 * tile, 5 * tile + 3, 17 * tile + 3, 1000003};
  for (uint32_t n : more)
    for (Mode mode : {Mode::VALUES, Mode::IN_PLACE_OUT, Mode::IN_PLACE_TMP})
      for (Dist dist : {Dist::RANDOM, Dist::FEW}) runCase<K>(keyType, n, dist, mode, seed, stream);
}

}  // namespace

int main(int argc, char** argv) {
  bool perf = true;
  uint64_t seed = 20240601;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--no-perf")) {
      perf = false;
    } else if (!std::strcmp(argv[i], "--seed") && i + 1 < argc) {
      seed = std::strtoull(argv[++i], nullptr, 10);
    } else {
      std::fprintf(stderr, "usage: %s [--no-perf] [--seed S]\n", argv[0]);
      return 2;
    }
  }
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s (sm_%d%d), seed %llu\n", prop.name, prop.major, prop.minor,
              (unsigned long long)seed);

  // The table the engine reads must describe the code that runs.
  oddeven::HostTuning t32, t64;
  CHECK(oddeven::readTuning(4, &t32));
  CHECK(oddeven::readTuning(8, &t64));
  const bool tableOk =
      t32.sortThreads == oddeven::Tuning<uint32_t>::SORT_THREADS &&
      t32.sortItems == oddeven::Tuning<uint32_t>::SORT_ITEMS &&
      t32.mergeThreads == oddeven::Tuning<uint32_t>::MERGE_THREADS &&
      t32.mergeItems == oddeven::Tuning<uint32_t>::MERGE_ITEMS &&
      t64.sortThreads == oddeven::Tuning<uint64_t>::SORT_THREADS &&
      t64.sortItems == oddeven::Tuning<uint64_t>::SORT_ITEMS &&
      t64.mergeThreads == oddeven::Tuning<uint64_t>::MERGE_THREADS &&
      t64.mergeItems == oddeven::Tuning<uint64_t>::MERGE_ITEMS;
  if (!tableOk) ++failures;
  std::printf("%s gpusort_oddeven_tuning u32 {%u, %u, %u, %u} u64 {%u, %u, %u, %u}\n",
              tableOk ? "ok  " : "FAIL", t32.sortThreads, t32.sortItems, t32.mergeThreads,
              t32.mergeItems, t64.sortThreads, t64.sortItems, t64.mergeThreads, t64.mergeItems);

  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream));
  runWidth<uint32_t>("u32", seed, stream);
  runWidth<uint64_t>("u64", seed, stream);
  if (perf) {
    perfCase<uint32_t>("u32", 100000000, 5, seed, stream);
    perfCase<uint64_t>("u64", 100000000, 5, seed, stream);
  }
  CHECK(cudaStreamDestroy(stream));
  std::printf("ODDEVEN SELFTEST %s (%d failed)\n", failures == 0 ? "PASS" : "FAIL", failures);
  return failures == 0 ? 0 : 1;
}
