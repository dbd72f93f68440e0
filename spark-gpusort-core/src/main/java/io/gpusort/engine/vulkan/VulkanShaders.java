package io.gpusort.engine.vulkan;

import io.gpusort.kernels.KernelBinaries;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * The engine's compute pipelines on one context, made once from the packaged SPIR-V
 * ({@link KernelBinaries#loadSpirv}). Push-constant sizes are those of the shaders' {@code Params}
 * blocks (64-bit buffer addresses first, then 32-bit words).
 */
final class VulkanShaders implements AutoCloseable {
  final VulkanPipeline histU32;
  final VulkanPipeline histU64;
  final VulkanPipeline reduce;
  final VulkanPipeline scan;
  /**
   * The radix pass's per-block counts and scatter, of one method: ranking with subgroup ballots
   * (tiles of {@link VulkanTuning#RADIX_RANK_TILE}) where the device can, else the two-bit-split
   * scatter ({@link VulkanTuning#RADIX_TILE}).
   */
  private final VulkanPipeline upsweepU32;
  private final VulkanPipeline upsweepU64;
  private final VulkanPipeline scatterU32;
  private final VulkanPipeline scatterU64;
  private final int radixTile;
  final VulkanPipeline blockSortU32;
  final VulkanPipeline blockSortU64;
  final VulkanPipeline mergeU32;
  final VulkanPipeline mergeU64;
  final VulkanPipeline extract;
  final VulkanPipeline gather;
  private final List<VulkanPipeline> all = new ArrayList<>();

  /** With {@code ranking}, radix passes rank with subgroup ballots (the device must support it). */
  VulkanShaders(VulkanContext context, boolean ranking) {
    boolean done = false;
    try {
      histU32 = make(context, "radix_hist_u32", 2, 2);
      histU64 = make(context, "radix_hist_u64", 2, 2);
      reduce = make(context, "radix_reduce", 2, 3);
      scan = make(context, "radix_scan", 3, 3);
      if (ranking) {
        upsweepU32 = make(context, "radix_upsweep_rank_u32", 2, 3);
        upsweepU64 = make(context, "radix_upsweep_rank_u64", 2, 3);
        scatterU32 = make(context, "radix_rank_u32", 5, 4, true);
        scatterU64 = make(context, "radix_rank_u64", 5, 4, true);
        radixTile = VulkanTuning.RADIX_RANK_TILE;
      } else {
        upsweepU32 = make(context, "radix_upsweep_u32", 2, 3);
        upsweepU64 = make(context, "radix_upsweep_u64", 2, 3);
        scatterU32 = make(context, "radix_scatter_u32", 5, 4);
        scatterU64 = make(context, "radix_scatter_u64", 5, 4);
        radixTile = VulkanTuning.RADIX_TILE;
      }
      blockSortU32 = make(context, "oddeven_block_u32", 4, 3);
      blockSortU64 = make(context, "oddeven_block_u64", 4, 3);
      mergeU32 = make(context, "oddeven_merge_u32", 4, 3);
      mergeU64 = make(context, "oddeven_merge_u64", 4, 3);
      extract = make(context, "words_extract", 3, 2);
      gather = make(context, "words_gather", 3, 2);
      done = true;
    } finally {
      if (!done) {
        close();
      }
    }
  }

  private VulkanPipeline make(VulkanContext context, String name, int addresses, int words) {
    return make(context, name, addresses, words, false);
  }

  private VulkanPipeline make(VulkanContext context, String name, int addresses, int words,
      boolean fullSubgroups) {
    byte[] spirv = KernelBinaries.loadSpirv(name);
    ByteBuffer code = ByteBuffer.allocateDirect(spirv.length).order(ByteOrder.nativeOrder());
    code.put(spirv).flip();
    VulkanPipeline pipeline = context.createPipeline(name, code, 8 * addresses + 4 * words,
        fullSubgroups);
    all.add(pipeline);
    return pipeline;
  }

  /** Keys of one radix scatter block, of the method {@link #upsweep} and {@link #scatter} run. */
  int radixTile() {
    return radixTile;
  }

  /** The radix pass's per-block counts for 32-bit ({@code narrow}) or 64-bit keys. */
  VulkanPipeline upsweep(boolean narrow) {
    return narrow ? upsweepU32 : upsweepU64;
  }

  /** The radix pass's scatter, matching {@link #upsweep} and {@link #radixTile}. */
  VulkanPipeline scatter(boolean narrow) {
    return narrow ? scatterU32 : scatterU64;
  }

  /** Push constants in the shaders' layout: addresses first, then 32-bit words. */
  static ByteBuffer push(long[] addresses, int... words) {
    ByteBuffer b = ByteBuffer.allocate(8 * addresses.length + 4 * words.length)
        .order(ByteOrder.LITTLE_ENDIAN);
    for (long a : addresses) {
      b.putLong(a);
    }
    for (int w : words) {
      b.putInt(w);
    }
    return b.flip();
  }

  @Override
  public void close() {
    for (VulkanPipeline p : all) {
      p.close();
    }
    all.clear();
  }
}
