// Launch parameters of every kernel, per GPU family: the one place to tune them.
//
// Device code reads the macros; the engines read the same values at module load from the
// __device__ tables each module exports (gpusort_radix_tuning, gpusort_oddeven_tuning,
// gpusort_merge_tuning), so a
// retuned value needs no change on the host side. The benchmark harness may override any of them
// with -D to time variants in one run; the shipped binaries are built without overrides.
#ifndef GPUSORT_TUNING_CUH
#define GPUSORT_TUNING_CUH

// Odd-even hybrid (oddeven.cu): ODDEVEN_* for 32-bit keys, ODDEVEN_*_64 for 64-bit keys. Each
// THREADS and ITEMS a power of two; SORT_ITEMS in [2, 32]; the sort tile (THREADS * ITEMS) takes 8
// bytes of static shared memory per item for 32-bit keys, 12 for 64-bit keys (48 KB at most); the
// merge tile is at most twice the sort tile.
// Merge tree (merge.cu): MERGE_TREE_THREADS x MERGE_TREE_ITEMS items per output tile, both powers
// of two, 12 bytes of static shared memory per item (48 KB at most). On the H200, 256 x 8 and
// 512 x 4 were the fastest of six shapes (kernels/bench/merge_bench.cu, 128 to 512 threads, 4 to
// 16 items); Ampere keeps 256 x 8 until measured.
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
// Hopper (sm_90: H100, H200) and newer, through the compute_90 PTX; also what host code sees.
#define GPUSORT_RADIX_HIST_ITEMS 16
#define GPUSORT_RADIX_SWEEP_ITEMS_32 22
#define GPUSORT_RADIX_SWEEP_ITEMS_64 15
#define GPUSORT_RADIX_SWEEP_MIN_BLOCKS 3
#define GPUSORT_RADIX_LOOKBACK_WINDOW 8
#define GPUSORT_ODDEVEN_SORT_THREADS 128
#define GPUSORT_ODDEVEN_SORT_ITEMS 32
#define GPUSORT_ODDEVEN_MERGE_THREADS 256
#define GPUSORT_ODDEVEN_MERGE_ITEMS 8
#define GPUSORT_ODDEVEN_SORT_THREADS_64 256
#define GPUSORT_ODDEVEN_SORT_ITEMS_64 16
#define GPUSORT_ODDEVEN_MERGE_THREADS_64 256
#define GPUSORT_ODDEVEN_MERGE_ITEMS_64 8
#define GPUSORT_MERGE_TREE_THREADS 256
#define GPUSORT_MERGE_TREE_ITEMS 8
#else
// Ampere (sm_80: A100) and the families between.
#define GPUSORT_RADIX_HIST_ITEMS 16
#define GPUSORT_RADIX_SWEEP_ITEMS_32 16
#define GPUSORT_RADIX_SWEEP_ITEMS_64 12
#define GPUSORT_RADIX_SWEEP_MIN_BLOCKS 3
#define GPUSORT_RADIX_LOOKBACK_WINDOW 1
#define GPUSORT_ODDEVEN_SORT_THREADS 256
#define GPUSORT_ODDEVEN_SORT_ITEMS 16
#define GPUSORT_ODDEVEN_MERGE_THREADS 256
#define GPUSORT_ODDEVEN_MERGE_ITEMS 8
#define GPUSORT_ODDEVEN_SORT_THREADS_64 256
#define GPUSORT_ODDEVEN_SORT_ITEMS_64 16
#define GPUSORT_ODDEVEN_MERGE_THREADS_64 256
#define GPUSORT_ODDEVEN_MERGE_ITEMS_64 8
#define GPUSORT_MERGE_TREE_THREADS 256
#define GPUSORT_MERGE_TREE_ITEMS 8
#endif

// Fixed by the kernels' structure (one thread per digit value in the per-digit steps).
#define RADIX_HIST_THREADS 256
#define RADIX_SWEEP_THREADS_32 256
#define RADIX_SWEEP_THREADS_64 256

#ifndef RADIX_HIST_ITEMS
#define RADIX_HIST_ITEMS GPUSORT_RADIX_HIST_ITEMS
#endif
#ifndef RADIX_SWEEP_ITEMS_32
#define RADIX_SWEEP_ITEMS_32 GPUSORT_RADIX_SWEEP_ITEMS_32
#endif
#ifndef RADIX_SWEEP_ITEMS_64
#define RADIX_SWEEP_ITEMS_64 GPUSORT_RADIX_SWEEP_ITEMS_64
#endif
#ifndef RADIX_LOOKBACK_WINDOW
#define RADIX_LOOKBACK_WINDOW GPUSORT_RADIX_LOOKBACK_WINDOW
#endif
#ifndef RADIX_SWEEP_MIN_BLOCKS_32
#define RADIX_SWEEP_MIN_BLOCKS_32 RADIX_SWEEP_MIN_BLOCKS
#endif
#ifndef RADIX_SWEEP_MIN_BLOCKS_64
#define RADIX_SWEEP_MIN_BLOCKS_64 RADIX_SWEEP_MIN_BLOCKS
#endif
#ifndef RADIX_SWEEP_MIN_BLOCKS
#define RADIX_SWEEP_MIN_BLOCKS GPUSORT_RADIX_SWEEP_MIN_BLOCKS
#endif
#ifndef ODDEVEN_SORT_THREADS
#define ODDEVEN_SORT_THREADS GPUSORT_ODDEVEN_SORT_THREADS
#endif
#ifndef ODDEVEN_SORT_ITEMS
#define ODDEVEN_SORT_ITEMS GPUSORT_ODDEVEN_SORT_ITEMS
#endif
#ifndef ODDEVEN_MERGE_THREADS
#define ODDEVEN_MERGE_THREADS GPUSORT_ODDEVEN_MERGE_THREADS
#endif
#ifndef ODDEVEN_MERGE_ITEMS
#define ODDEVEN_MERGE_ITEMS GPUSORT_ODDEVEN_MERGE_ITEMS
#endif
#ifndef ODDEVEN_SORT_THREADS_64
#define ODDEVEN_SORT_THREADS_64 GPUSORT_ODDEVEN_SORT_THREADS_64
#endif
#ifndef ODDEVEN_SORT_ITEMS_64
#define ODDEVEN_SORT_ITEMS_64 GPUSORT_ODDEVEN_SORT_ITEMS_64
#endif
#ifndef ODDEVEN_MERGE_THREADS_64
#define ODDEVEN_MERGE_THREADS_64 GPUSORT_ODDEVEN_MERGE_THREADS_64
#endif
#ifndef ODDEVEN_MERGE_ITEMS_64
#define ODDEVEN_MERGE_ITEMS_64 GPUSORT_ODDEVEN_MERGE_ITEMS_64
#endif
#ifndef MERGE_TREE_THREADS
#define MERGE_TREE_THREADS GPUSORT_MERGE_TREE_THREADS
#endif
#ifndef MERGE_TREE_ITEMS
#define MERGE_TREE_ITEMS GPUSORT_MERGE_TREE_ITEMS
#endif

#endif  // GPUSORT_TUNING_CUH
