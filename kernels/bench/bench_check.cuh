// CHECK(call) for the harnesses in this folder: a CUDA call that fails prints where and why and
// exits with BENCH_CHECK_EXIT (2, a harness that could not run, unless the file that includes this
// defines it first: the self-tests use 1, as for a failed check).
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#ifndef BENCH_CHECK_EXIT
#define BENCH_CHECK_EXIT 2
#endif

#define CHECK(call)                                                                       \
  do {                                                                                    \
    cudaError_t err_ = (call);                                                            \
    if (err_ != cudaSuccess) {                                                            \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,          \
                   cudaGetErrorString(err_));                                            \
      std::exit(BENCH_CHECK_EXIT);                                                        \
    }                                                                                     \
  } while (0)
