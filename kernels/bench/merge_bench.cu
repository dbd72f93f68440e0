// Reduce side of a global sort: a reducer holds k sorted runs of uint64 keys, concatenated, with
// uneven lengths, and needs the stable permutation that orders them (value = index into the
// concatenation). Is a merge-path merge of the runs faster than the project's radix sort of the
// concatenation? This harness times both on the same device-resident input and checks that they
// agree exactly (both stable), with CUB's DeviceMerge as a reference line where CCCL has it.
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -o merge_bench merge_bench.cu
//   ./merge_bench [--sizes 6.25e6,2.5e7,1e8] [--ks 4,16,64] [--reps 5] [--check-only]
//                 [--skip-sweep]
//
// Every run first sweeps small shapes (k from 1 to 64, empty and one-item runs, 16 distinct keys,
// all keys equal), each checked against std::stable_sort on the CPU; --check-only stops there.
// Then each (k, n) is timed (median of reps after a warm-up) for random keys and for keys of 16
// distinct values, runs 0.5x..1.5x the mean length, the smallest n also checked on the CPU. One
// table row per case, printed as it finishes: keys and permutation from both, then the
// permutation only (radix: no keys out of its last pass; merge: none out of its last level), then
// the CUB tree. GB/s is n * 12 bytes (key and value once) over the time. Exit code 1 when any
// check fails. The radix time includes its host round trip (the digit counts, radix.cu's step 3),
// as the engine runs it; the merge plan (each level's pairs, known from the run lengths) is built
// and uploaded before timing. The merge kernels are the product's (../cuda/merge.cu, tile from
// tuning.cuh); -DMERGE_TREE_THREADS / -DMERGE_TREE_ITEMS time another tile: 256 x 8 and 512 x 4
// were the fastest of six shapes on the H200 (128 to 512 threads, 4 to 16 items).
#include <cub/device/device_radix_sort.cuh>
#include <cuda_runtime.h>

#if !defined(MB_NO_CUB_MERGE) && __has_include(<cub/device/device_merge.cuh>)
#include <cub/device/device_merge.cuh>
#define MB_CUB_MERGE 1
#else
#define MB_CUB_MERGE 0
#endif

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "../cuda/merge.cu"
#include "../cuda/radix.cu"
#include "radix_host.cuh"

#include "bench_check.cuh"

namespace {

// ---------------------------------------------------------------------------------------------
// The merge tree: the product's kernels (../cuda/merge.cu), launched in its host sequence.

using mergetree::Pair;
using mergetree::THREADS;
using mergetree::ITEMS;
using mergetree::TILE;

// The levels of a merge tree, built once on the host from the run offsets (a reducer knows its
// runs' lengths before it launches anything); the pairs of every level sit in one device array.
struct Level {
  uint32_t firstPair, numPairs, tiles;
};

struct MergePlan {
  uint32_t n = 0;
  std::vector<Level> levels;
  std::vector<Pair> pairs;
  Pair* dPairs = nullptr;
  uint32_t* dSplits = nullptr;

  explicit MergePlan(const std::vector<uint32_t>& offsets) {
    n = offsets.back();
    std::vector<uint32_t> runs = offsets;  // k + 1 offsets of the current level's runs
    uint32_t maxTiles = 0;
    // One run still gets a level (a copy that writes the values), so k = 1 runs the same code;
    // no items, no level.
    while (n > 0 && (runs.size() > 2 || levels.empty())) {
      const size_t k = runs.size() - 1;
      Level lv{static_cast<uint32_t>(pairs.size()), static_cast<uint32_t>((k + 1) / 2), 0};
      std::vector<uint32_t> next;
      for (size_t j = 0; 2 * j < k; ++j) {
        const uint32_t a = runs[2 * j], m = runs[2 * j + 1], e = runs[std::min(2 * j + 2, k)];
        pairs.push_back({a, m - a, e - m, lv.tiles});
        lv.tiles += (e - a + TILE - 1) / TILE;
        next.push_back(a);
      }
      next.push_back(runs[k]);
      runs.swap(next);
      levels.push_back(lv);
      maxTiles = std::max(maxTiles, lv.tiles);
    }
    CHECK(cudaMalloc(&dPairs, std::max<size_t>(pairs.size(), 1) * sizeof(Pair)));
    CHECK(cudaMemcpy(dPairs, pairs.data(), pairs.size() * sizeof(Pair), cudaMemcpyHostToDevice));
    CHECK(cudaMalloc(&dSplits, (maxTiles + 1) * 4ull));
  }
  ~MergePlan() {
    cudaFree(dPairs);
    cudaFree(dSplits);
  }
  MergePlan(const MergePlan&) = delete;
  MergePlan& operator=(const MergePlan&) = delete;

  // keysIn (the concatenation) -> keysOut / valsOut; tmp is the other ping-pong buffer, chosen
  // so that the last level lands in out. keysIn is only read. n == 0: no level, nothing runs.
  void run(const uint64_t* keysIn, uint64_t* keysOut, uint32_t* valsOut, uint64_t* keysTmp,
           uint32_t* valsTmp, bool writeKeys) const {
    const size_t L = levels.size();
    const uint64_t* srcK = keysIn;
    const uint32_t* srcV = nullptr;
    for (size_t l = 0; l < L; ++l) {
      const bool toOut = (L - 1 - l) % 2 == 0;
      uint64_t* dstK = toOut ? keysOut : keysTmp;
      uint32_t* dstV = toOut ? valsOut : valsTmp;
      const Level& lv = levels[l];
      const Pair* pp = dPairs + lv.firstPair;
      merge_tree_partition_u64<<<(lv.tiles + 255) / 256, 256>>>(srcK, pp, lv.numPairs, lv.tiles,
                                                                 dSplits);
      merge_tree_tile_u64<<<lv.tiles, THREADS>>>(srcK, srcV,
                                                 l + 1 == L && !writeKeys ? nullptr : dstK, dstV,
                                                 pp, lv.numPairs, dSplits);
      CHECK(cudaGetLastError());
      srcK = dstK;
      srcV = dstV;
    }
  }
};

#if MB_CUB_MERGE
// The same tree with one cub::DeviceMerge::MergePairs per pair, a reference line only: CUB
// documents its merge as unstable, so only its keys are checked. Level 0 reads an iota buffer.
// temp null: nothing runs; returns the temporary storage the largest call needs.
size_t cubTree(const MergePlan& plan, const uint64_t* keysIn, const uint32_t* iota,
               uint64_t* keysOut, uint32_t* valsOut, uint64_t* keysTmp, uint32_t* valsTmp,
               void* temp, size_t tempBytes) {
  const size_t L = plan.levels.size();
  const uint64_t* srcK = keysIn;
  const uint32_t* srcV = iota;
  for (size_t l = 0; l < L; ++l) {
    const bool toOut = (L - 1 - l) % 2 == 0;
    uint64_t* dstK = toOut ? keysOut : keysTmp;
    uint32_t* dstV = toOut ? valsOut : valsTmp;
    for (uint32_t j = 0; j < plan.levels[l].numPairs; ++j) {
      const Pair& p = plan.pairs[plan.levels[l].firstPair + j];
      const uint32_t a = p.aStart, b = p.aStart + p.aLen;
      size_t bytes = tempBytes;
      if (temp == nullptr || p.bLen > 0) {
        CHECK(cub::DeviceMerge::MergePairs(temp, bytes, srcK + a, srcV + a, p.aLen, srcK + b,
                                           srcV + b, p.bLen, dstK + a, dstV + a));
        if (temp == nullptr) tempBytes = std::max(tempBytes, bytes);
      } else {  // an odd run: copied through
        CHECK(cudaMemcpyAsync(dstK + a, srcK + a, p.aLen * 8ull, cudaMemcpyDefault));
        CHECK(cudaMemcpyAsync(dstV + a, srcV + a, p.aLen * 4ull, cudaMemcpyDefault));
      }
    }
    srcK = dstK;
    srcV = dstV;
  }
  return tempBytes;
}
#endif

// ---------------------------------------------------------------------------------------------
// Inputs, checks and timing (the style of sort_bench.cu).

enum class Dist { RANDOM, FEW, EQUAL };
const char* distName(Dist d) {
  return d == Dist::RANDOM ? "random" : d == Dist::FEW ? "16-distinct" : "all-equal";
}

__device__ uint64_t mix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

__global__ void fillKeys(uint64_t* keys, uint32_t n, Dist d, uint64_t seed) {
  for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += uint64_t(gridDim.x) * blockDim.x) {
    const uint64_t r = mix64(seed ^ mix64(i));
    keys[i] = d == Dist::RANDOM ? r : d == Dist::FEW ? (r & 15) * 0x0101010101010101ull : 42;
  }
}

template <typename T>
__global__ void poison(T* a, uint32_t n, T v) {
  for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += uint64_t(gridDim.x) * blockDim.x)
    a[i] = v;
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
uint64_t mismatches(const T* a, const T* b, uint32_t n) {
  unsigned long long *d, h = 0;
  CHECK(cudaMalloc(&d, 8));
  CHECK(cudaMemset(d, 0, 8));
  if (n) countMismatches<<<1024, 256>>>(a, b, n, d);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(&h, d, 8, cudaMemcpyDeviceToHost));
  CHECK(cudaFree(d));
  return h;
}

template <typename T>
std::vector<T> toHost(const T* d, uint32_t n) {
  std::vector<T> h(n);
  CHECK(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
  return h;
}

// k + 1 run offsets summing to n, each run 0.5x..1.5x the mean. ragged: about half the runs
// (never the last) get 0 to 3 items instead, the edge cases of the partition and the tiles.
std::vector<uint32_t> runOffsets(uint32_t k, uint32_t n, bool ragged, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint32_t> off(k + 1, 0), tiny(k, 0);
  std::vector<double> w(k, 0);
  uint64_t left = n;  // what the weighted runs share
  for (uint32_t i = 0; i < k; ++i) {
    if (ragged && i + 1 < k && rng() % 2) {
      tiny[i] = static_cast<uint32_t>(std::min<uint64_t>(rng() % 4, left));
      left -= tiny[i];
    } else {
      w[i] = 0.5 + (rng() >> 11) * 0x1p-53;
    }
  }
  const double total = std::accumulate(w.begin(), w.end(), 0.0);
  double acc = 0;
  uint64_t given = 0;
  for (uint32_t i = 0; i < k; ++i) {  // rounded prefix sums: the lengths add up to n exactly
    acc += w[i];
    const uint64_t upTo = i + 1 == k ? left : static_cast<uint64_t>(left * (acc / total) + 0.5);
    off[i + 1] = static_cast<uint32_t>(off[i] + tiny[i] + (upTo - given));
    given = upTo;
  }
  return off;
}

template <typename F>
double medianMs(int reps, F&& run) {
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  run();  // warm-up
  CHECK(cudaDeviceSynchronize());
  std::vector<float> ms(reps);
  for (float& m : ms) {
    CHECK(cudaEventRecord(a));
    run();
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    CHECK(cudaEventElapsedTime(&m, a, b));
  }
  CHECK(cudaEventDestroy(a));
  CHECK(cudaEventDestroy(b));
  std::sort(ms.begin(), ms.end());
  return ms[reps / 2];
}

radixhost::Tuning gTuning;
radixhost::Scratch gScratch;
int gSms = 0, gCases = 0;
bool allOk = true;

// One input: make and sort the runs, then run, check and (reps > 0) time every variant. Every
// result must equal the radix sort's, keys and values; cpuCheck also compares both with
// std::stable_sort of the concatenation.
void runCase(uint32_t k, uint32_t n, Dist dist, bool ragged, int reps, bool cpuCheck) {
  const std::vector<uint32_t> off = runOffsets(k, n, ragged, 0x5eedull * k + n);
  const size_t nk = std::max<uint32_t>(n, 1);
  uint64_t *keysIn, *radK, *outK, *tmpK;
  uint32_t *radV, *outV, *tmpV, *iotaV;
  for (uint64_t** p : {&keysIn, &radK, &outK, &tmpK}) CHECK(cudaMalloc(p, nk * 8));
  for (uint32_t** p : {&radV, &outV, &tmpV, &iotaV}) CHECK(cudaMalloc(p, nk * 4));
  fillKeys<<<1024, 256>>>(tmpK, n, dist, 0xabcdull + n + k);
  radixhost::fillIota<<<1024, 256>>>(iotaV, n);
  CHECK(cudaGetLastError());
  {  // each run sorted on its own with CUB (a tool here, not a contender)
    size_t bytes = 0;
    void* temp;
    CHECK(cub::DeviceRadixSort::SortKeys(nullptr, bytes, tmpK, keysIn, n));
    CHECK(cudaMalloc(&temp, std::max<size_t>(bytes, 1)));
    for (uint32_t r = 0; r < k; ++r)
      if (off[r + 1] > off[r])
        CHECK(cub::DeviceRadixSort::SortKeys(temp, bytes, tmpK + off[r], keysIn + off[r],
                                             off[r + 1] - off[r]));
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaFree(temp));
  }
  const MergePlan plan(off);
  bool ok = true;
  auto expect = [&](const char* what, uint64_t bad) {
    if (bad)
      std::printf("k=%u n=%u %s%s: %s MISMATCH %llu\n", k, n, distName(dist),
                  ragged ? " ragged" : "", what, (unsigned long long)bad);
    ok &= bad == 0;
  };
  int passes = 0;
  // Radix with keys into rad* (the reference every other result is compared with); perm-only
  // into out*, like every merge.
  auto radix = [&] {
    CHECK(radixhost::sortPairs<uint64_t>(gTuning, gScratch, gSms, keysIn, nullptr, radK, radV,
                                         tmpK, tmpV, n, true, 0, &passes));
  };
  auto radixPerm = [&] {
    CHECK(radixhost::sortPairs<uint64_t>(gTuning, gScratch, gSms, keysIn, nullptr, outK, outV,
                                         tmpK, tmpV, n, false, 0, &passes));
  };
  auto merge = [&] { plan.run(keysIn, outK, outV, tmpK, tmpV, true); };
  auto mergePerm = [&] { plan.run(keysIn, outK, outV, tmpK, tmpV, false); };
  auto againstRadix = [&](const char* keysWhat, const char* valsWhat) {
    CHECK(cudaDeviceSynchronize());
    if (keysWhat) expect(keysWhat, mismatches(outK, radK, n));
    if (valsWhat) expect(valsWhat, mismatches(outV, radV, n));
  };

  // First runs untimed, on outputs poisoned with two patterns, so that no-ops cannot agree.
  poison<<<1024, 256>>>(radK, n, uint64_t(0x5a5a5a5a5a5a5a5aull));
  poison<<<1024, 256>>>(outK, n, uint64_t(0xa5a5a5a5a5a5a5a5ull));
  poison<<<1024, 256>>>(radV, n, 0x5a5a5a5au);
  poison<<<1024, 256>>>(outV, n, 0xa5a5a5a5u);
  radix();
  merge();
  againstRadix("merge keys", "merge values");
  if (cpuCheck) {
    const std::vector<uint64_t> in = toHost(keysIn, n);
    std::vector<uint32_t> perm(n);
    std::iota(perm.begin(), perm.end(), 0u);
    std::stable_sort(perm.begin(), perm.end(),
                     [&](uint32_t a, uint32_t b) { return in[a] < in[b]; });
    std::vector<uint64_t> want(n);
    for (uint32_t i = 0; i < n; ++i) want[i] = in[perm[i]];
    auto diff = [](const auto& x, const auto& y) {
      uint64_t bad = 0;
      for (size_t i = 0; i < x.size(); ++i) bad += x[i] != y[i];
      return bad;
    };
    expect("merge keys vs CPU", diff(toHost(outK, n), want));
    expect("merge values vs CPU", diff(toHost(outV, n), perm));
    expect("radix keys vs CPU", diff(toHost(radK, n), want));
    expect("radix values vs CPU", diff(toHost(radV, n), perm));
  }
  double radixMs = 0, mergeMs = 0, radixPermMs = 0, mergePermMs = 0, cubMs = -1;
  if (reps > 0) {
    radixMs = medianMs(reps, radix);
    mergeMs = medianMs(reps, merge);
    againstRadix("timed merge keys", "timed merge values");
    poison<<<1024, 256>>>(outV, n, 0u);
    mergePermMs = medianMs(reps, mergePerm);
    againstRadix(nullptr, "merge perm-only values");
    poison<<<1024, 256>>>(outV, n, 0u);
    radixPermMs = medianMs(reps, radixPerm);
    againstRadix(nullptr, "radix perm-only values");
  }
#if MB_CUB_MERGE
  if (k > 1 && n > 0) {
    void* temp;
    const size_t tempBytes = cubTree(plan, keysIn, iotaV, outK, outV, tmpK, tmpV, nullptr, 0);
    CHECK(cudaMalloc(&temp, std::max<size_t>(tempBytes, 1)));
    auto cub = [&] { cubTree(plan, keysIn, iotaV, outK, outV, tmpK, tmpV, temp, tempBytes); };
    poison<<<1024, 256>>>(outK, n, uint64_t(0));
    cub();
    againstRadix("CUB merge keys", nullptr);
    if (reps > 0) {
      cubMs = medianMs(reps, cub);
      againstRadix("timed CUB merge keys", nullptr);
    }
    CHECK(cudaFree(temp));
  }
#endif
  allOk &= ok;
  ++gCases;
  if (reps > 0) {
    char cub[32] = "n/a";
    if (cubMs >= 0) std::snprintf(cub, sizeof(cub), "%.3f", cubMs);
    std::printf("| %u | %u | %s | %.3f | %.3f | %.2f | %.1f | %.1f | %.3f | %.3f | %.2f | %s "
                "| %s |\n",
                k, n, distName(dist), radixMs, mergeMs, mergeMs / radixMs, n * 12e-6 / radixMs,
                n * 12e-6 / mergeMs, radixPermMs, mergePermMs, mergePermMs / radixPermMs, cub,
                ok ? "ok" : "FAIL");
    std::fflush(stdout);
  }
  for (void* p : {(void*)keysIn, (void*)radK, (void*)outK, (void*)tmpK, (void*)radV, (void*)outV,
                  (void*)tmpV, (void*)iotaV})
    CHECK(cudaFree(p));
}

std::vector<uint32_t> parseList(const char* s) {
  std::vector<uint32_t> out;
  std::string str(s);
  for (size_t pos = 0; pos < str.size();) {
    size_t end = str.find(',', pos);
    if (end == std::string::npos) end = str.size();
    out.push_back(static_cast<uint32_t>(std::stod(str.substr(pos, end - pos))));
    pos = end + 1;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<uint32_t> sizes = {6250000u, 25000000u, 100000000u}, ks = {4, 16, 64};
  int reps = 5;
  bool checkOnly = false, sweep = true;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--sizes") && i + 1 < argc) sizes = parseList(argv[++i]);
    else if (!std::strcmp(argv[i], "--ks") && i + 1 < argc) ks = parseList(argv[++i]);
    else if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) reps = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--check-only")) checkOnly = true;
    else if (!std::strcmp(argv[i], "--skip-sweep")) sweep = false;
    else {
      std::fprintf(stderr, "unknown argument %s\n", argv[i]);
      return 2;
    }
  }
  if (reps < 1 || sizes.empty() || ks.empty() || *std::min_element(ks.begin(), ks.end()) < 1 ||
      *std::max_element(sizes.begin(), sizes.end()) > (1u << 31)) {
    std::fprintf(stderr, "need reps >= 1, k >= 1, n <= 2^31\n");
    return 2;
  }
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device %s, %d SMs; merge tile %u x %u; CUB DeviceMerge %s\n", prop.name,
              prop.multiProcessorCount, THREADS, ITEMS, MB_CUB_MERGE ? "present" : "absent");
  gTuning = radixhost::readTuning();
  gSms = prop.multiProcessorCount;
  const uint32_t maxN = std::max(1u << 21, *std::max_element(sizes.begin(), sizes.end()));
  const uint32_t minTile = std::min(gTuning.sweepThreads32 * gTuning.sweepItems32,
                                    gTuning.sweepThreads64 * gTuning.sweepItems64);
  CHECK(gScratch.init((uint64_t(maxN) + minTile - 1) / minTile));

  if (sweep || checkOnly) {
    const uint32_t sweepKs[] = {1, 2, 3, 4, 5, 7, 16, 33, 64};
    const uint32_t sweepNs[] = {0, 1, 2, 3, 100, TILE - 1, TILE, TILE + 1, 3 * TILE + 7, 100003,
                                1000003};
    for (uint32_t k : sweepKs)
      for (uint32_t n : sweepNs)
        for (Dist d : {Dist::RANDOM, Dist::FEW, Dist::EQUAL})
          for (bool ragged : {false, true}) runCase(k, n, d, ragged, 0, true);
    std::printf("correctness sweep: %d cases against the CPU, %s\n", gCases,
                allOk ? "PASS" : "FAIL");
  }
  if (!checkOnly) {
    std::printf("\n| k | n | keys | radix ms | merge ms | merge/radix | radix GB/s | merge GB/s | "
                "perm-only radix ms | perm-only merge ms | perm-only ratio | CUB merge ms | "
                "check |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | "
                "--- | --- |\n");
    const uint32_t smallest = *std::min_element(sizes.begin(), sizes.end());
    for (uint32_t n : sizes)
      for (uint32_t k : ks)
        for (Dist d : {Dist::RANDOM, Dist::FEW}) runCase(k, n, d, false, reps, n == smallest);
  }
  gScratch.release();
  std::printf("%s\n", allOk ? "ALL CHECKS PASS" : "SOME CHECKS FAILED");
  return allOk ? 0 : 1;
}
