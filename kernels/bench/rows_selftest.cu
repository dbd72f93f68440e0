// Self-test of the row gather (../cuda/rows.cu) on the GPU host, in the host sequence its header
// gives: records of random sizes (and of one size) in pages, a random permutation, the device's
// output stream compared byte for byte with the same gather on the CPU. Then times the gather of
// 6.25M records of 40 bytes (one partition of the 1e8-row SortBenchmark on 16 cores).
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -o rows_selftest rows_selftest.cu && ./rows_selftest
//
// Last line ROWS SELFTEST PASS (exit 0) or ROWS SELFTEST FAIL (exit 1).
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <random>
#include <vector>

#include "../cuda/rows.cu"

#define BENCH_CHECK_EXIT 1
#include "bench_check.cuh"

namespace {

struct Case {
  std::vector<uint64_t> data;      // pages back to back, as uploaded
  std::vector<uint64_t> pointers;  // page << 40 | offset
  std::vector<uint64_t> pageBase;
  std::vector<uint32_t> perm;
  uint64_t recordBytes = 0;
};

// n records of 8 + L bytes, L in [minL, maxL] (multiples of 8), in pages of pageBytes.
Case makeCase(uint32_t n, uint32_t minL, uint32_t maxL, uint64_t pageBytes, std::mt19937_64& rng) {
  Case c;
  uint64_t pageUsed = pageBytes;
  for (uint32_t r = 0; r < n; ++r) {
    uint64_t len = 8 * (minL / 8 + rng() % ((maxL - minL) / 8 + 1));
    uint64_t rec = 8 + len;
    if (pageUsed + rec > pageBytes) {
      c.data.resize(c.data.size() + (pageUsed < pageBytes ? (pageBytes - pageUsed) / 8 : 0));
      c.pageBase.push_back(8 * c.data.size());
      pageUsed = 0;
    }
    uint64_t page = c.pageBase.size() - 1;
    c.pointers.push_back(page << 40 | pageUsed);
    c.data.push_back(len);
    for (uint64_t k = 0; k < len / 8; ++k) c.data.push_back(rng());
    pageUsed += rec;
    c.recordBytes += rec;
  }
  c.perm.resize(n);
  std::iota(c.perm.begin(), c.perm.end(), 0u);
  std::shuffle(c.perm.begin(), c.perm.end(), rng);
  return c;
}

std::vector<uint64_t> cpuGather(const Case& c) {
  std::vector<uint64_t> out;
  for (uint32_t r : c.perm) {
    uint64_t p = c.pointers[r];
    uint64_t at = (c.pageBase[p >> 40] + (p & rows::OFFSET_MASK)) / 8;
    uint64_t words = 1 + c.data[at] / 8;
    out.insert(out.end(), c.data.begin() + at, c.data.begin() + at + words);
  }
  return out;
}

template <typename T>
T* upload(const std::vector<T>& v) {
  T* d;
  CHECK(cudaMalloc(&d, std::max<size_t>(8, v.size() * sizeof(T))));
  if (!v.empty()) CHECK(cudaMemcpy(d, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

int grid(uint64_t items) { return static_cast<int>(std::min<uint64_t>((items + 255) / 256, 1056)); }

// The device sequence of rows.cu; fixedRecord > 0 takes the fixed-size path.
std::vector<uint64_t> gpuGather(const Case& c, uint32_t fixedRecord, double* ms) {
  uint32_t n = static_cast<uint32_t>(c.perm.size());
  uint64_t* in = upload(c.data);
  uint64_t* pointers = upload(c.pointers);
  uint64_t* pageBase = upload(c.pageBase);
  uint32_t* perm = upload(c.perm);
  uint64_t *src, *dst, *out, *tileSums;
  uint32_t tiles = (n + rows::SCAN_TILE - 1) / rows::SCAN_TILE;
  CHECK(cudaMalloc(&src, 8ull * n + 8));
  CHECK(cudaMalloc(&dst, 8ull * n + 8));
  CHECK(cudaMalloc(&tileSums, 8ull * tiles + 8));
  CHECK(cudaMalloc(&out, c.recordBytes + 8));
  CHECK(cudaMemset(out, 0xab, c.recordBytes + 8));
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  CHECK(cudaEventRecord(start));
  if (n > 0) {
    rows_source<<<grid(n), 256>>>(pointers, perm, pageBase, src, n);
    if (fixedRecord > 0) {
      rows_gather_fixed<<<grid(uint64_t{n} * fixedRecord / 8), 256>>>(in, src, out, n,
                                                                       fixedRecord / 8);
    } else {
      rows_record_bytes<<<grid(n), 256>>>(in, src, dst, n);
      rows_scan_tiles<<<tiles, rows::SCAN_THREADS>>>(dst, tileSums, n);
      rows_scan_tile_sums<<<1, rows::SCAN_THREADS>>>(tileSums, tiles);
      rows_scan_apply<<<tiles, rows::SCAN_THREADS>>>(dst, tileSums, n);
      rows_gather_var<<<grid(32ull * n), 256>>>(in, src, dst, out, n);
    }
  }
  CHECK(cudaEventRecord(stop));
  CHECK(cudaEventSynchronize(stop));
  CHECK(cudaGetLastError());
  float elapsed = 0;
  CHECK(cudaEventElapsedTime(&elapsed, start, stop));
  if (ms) *ms = elapsed;
  std::vector<uint64_t> result(c.recordBytes / 8);
  if (!result.empty()) {
    CHECK(cudaMemcpy(result.data(), out, c.recordBytes, cudaMemcpyDeviceToHost));
  }
  for (void* p : {static_cast<void*>(in), static_cast<void*>(pointers),
                  static_cast<void*>(pageBase), static_cast<void*>(perm), static_cast<void*>(src),
                  static_cast<void*>(dst), static_cast<void*>(out), static_cast<void*>(tileSums)}) {
    CHECK(cudaFree(p));
  }
  return result;
}

}  // namespace

int main() {
  std::mt19937_64 rng(20261201);
  bool ok = true;
  struct Shape { uint32_t n, minL, maxL; uint64_t page; };
  const Shape shapes[] = {{0, 8, 8, 4096},      {1, 16, 16, 4096},     {2, 8, 64, 4096},
                          {1023, 8, 8, 4096},   {1025, 8, 120, 4096},  {4097, 0, 256, 65536},
                          {100000, 24, 24, 1 << 20}, {300001, 8, 512, 1 << 22},
                          {2000000, 16, 136, 8 << 20}};
  for (const Shape& s : shapes) {
    Case c = makeCase(s.n, s.minL, s.maxL, s.page, rng);
    std::vector<uint64_t> want = cpuGather(c);
    bool fixed = s.minL == s.maxL;
    std::vector<uint64_t> got = gpuGather(c, 0, nullptr);
    bool same = got == want;
    if (fixed) same = same && gpuGather(c, 8 + s.minL, nullptr) == want;
    std::printf("n=%u record %u..%u bytes%s: %s\n", s.n, 8 + s.minL, 8 + s.maxL,
                fixed ? " (fixed and variable paths)" : "", same ? "ok" : "MISMATCH");
    ok = ok && same;
  }
  Case big = makeCase(6250000, 32, 32, 8 << 20, rng);
  double fixedMs = 0, varMs = 0;
  gpuGather(big, 40, &fixedMs);
  bool same = gpuGather(big, 40, &fixedMs) == cpuGather(big);
  gpuGather(big, 0, &varMs);
  std::printf("6.25M records of 40 bytes: fixed path %.3f ms, variable path %.3f ms (%s)\n",
              fixedMs, varMs, same ? "ok" : "MISMATCH");
  ok = ok && same;
  std::printf(ok ? "ROWS SELFTEST PASS\n" : "ROWS SELFTEST FAIL\n");
  return ok ? 0 : 1;
}
