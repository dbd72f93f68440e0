package io.gpusort.engine.vulkan;

/**
 * The shaders' launch parameters as the host needs them to size grids and buffers. The values are
 * those of {@code kernels/vulkan/tuning.glsl}, the one place they are tuned, which the SPIR-V was
 * built with; {@code VulkanTuningTest} fails when the two disagree.
 */
final class VulkanTuning {
  /** Bits of one radix digit: passes of a 32-bit key are 32 / RADIX_BITS. */
  static final int RADIX_BITS = 8;
  static final int RADIX_THREADS = 256;
  static final int RADIX_ITEMS = 8;
  static final int RADIX_HIST_ITEMS = 16;
  static final int RADIX_SCAN_ITEMS = 4;
  /**
   * Keys a thread of the ballot-ranking scatter holds. {@code
   * -Dgpusort.vulkan.experiment.rankItems} changes it for experiments with radix_rank and
   * radix_upsweep_rank SPIR-V built with that RADIX_RANK_ITEMS (passed through the {@code
   * gpusort.kernels.vulkan.*} overrides); not for production.
   */
  static final int RADIX_RANK_ITEMS = Integer.getInteger("gpusort.vulkan.experiment.rankItems",
      22);
  static final int ODDEVEN_THREADS = 256;
  static final int ODDEVEN_ITEMS = 8;
  static final int WORDS_THREADS = 256;
  static final int WORDS_ITEMS = 4;

  /** Values of one radix digit. */
  static final int RADIX_DIGITS = 1 << RADIX_BITS;
  /** Keys of one radix scatter block (and of one per-block histogram). */
  static final int RADIX_TILE = RADIX_THREADS * RADIX_ITEMS;
  /** Keys of one ballot-ranking scatter block (and of its per-block histogram). */
  static final int RADIX_RANK_TILE = RADIX_THREADS * RADIX_RANK_ITEMS;
  /** Keys one workgroup of the upfront histogram reads. */
  static final int RADIX_HIST_TILE = RADIX_THREADS * RADIX_HIST_ITEMS;
  /** Blocks of one digit that one scan workgroup covers. */
  static final int RADIX_SCAN_CHUNK = RADIX_THREADS * RADIX_SCAN_ITEMS;
  /** Keys of one odd-even block-sort tile, and of one merge tile. */
  static final int ODDEVEN_TILE = ODDEVEN_THREADS * ODDEVEN_ITEMS;
  /** Items one workgroup of the word shaders moves. */
  static final int WORDS_TILE = WORDS_THREADS * WORDS_ITEMS;

  private VulkanTuning() {}
}
