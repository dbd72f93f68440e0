// Launch parameters of the Vulkan shaders: the one place to tune them. The engine mirrors these
// values in io.gpusort.engine.vulkan.VulkanTuning, and VulkanTuningTest checks that both agree.
// One SPIR-V build serves every device; shared memory stays within 32 KB a workgroup, the least
// that the engine accepts (lavapipe's limit).
#ifndef GPUSORT_VULKAN_TUNING_GLSL
#define GPUSORT_VULKAN_TUNING_GLSL

// Radix sort: digits of RADIX_BITS bits (even, 2..8); a scatter tile is RADIX_THREADS *
// RADIX_ITEMS keys (also the per-block histogram's tile); the upfront histogram reads
// RADIX_THREADS * RADIX_HIST_ITEMS keys a workgroup; a scan workgroup covers RADIX_THREADS *
// RADIX_SCAN_ITEMS blocks of one digit value.
// 8-bit digits: on the H200 (NVIDIA's Vulkan driver) 4-bit digits, which write 16 runs a block
// instead of 256, were slower at 1e7 and 1e8 keys alike (spark-gpusort-examples/BENCHMARKS.md,
// 2026-11-30, Vulkan engine).
#define RADIX_BITS 8
#define RADIX_THREADS 256
#define RADIX_ITEMS 8
#define RADIX_HIST_ITEMS 16
#define RADIX_SCAN_ITEMS 4
// The ballot-ranking scatter (radix_rank.comp, devices with full subgroups of 8 to 32): keys a
// thread; its tile, RADIX_THREADS * RADIX_RANK_ITEMS, is also that of its per-block histogram
// (radix_upsweep.comp built with -DRANK). At most 32 KB of shared memory for any subgroup size.
#define RADIX_RANK_ITEMS 22
// 1: the ballot-ranking scatter reads a tile's values together with its keys (registers);
// 0: after the keys have gone out.
#define RADIX_RANK_EARLY_VALS 1

// Odd-even hybrid: block-sort tile and merge tile, both ODDEVEN_THREADS * ODDEVEN_ITEMS items.
#define ODDEVEN_THREADS 256
#define ODDEVEN_ITEMS 8

// Word extraction and gathers: items a thread.
#define WORDS_THREADS 256
#define WORDS_ITEMS 4

#endif
