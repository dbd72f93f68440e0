package io.gpusort.engine.vulkan;

import static io.gpusort.engine.vulkan.VulkanShaders.push;

import io.gpusort.config.GpuSortConf.Algorithm;
import io.gpusort.engine.KeyBatch;
import io.gpusort.engine.vulkan.VulkanContext.BufferKind;
import io.gpusort.memory.HostMemory;
import java.util.ArrayList;
import java.util.List;

/**
 * One piece's sort on a Vulkan device: uploads the key columns, sorts (key, row) pairs with the
 * radix or the odd-even shaders, and downloads the permutation. Two submissions: the first uploads
 * and counts every digit of every word (the host then skips the constant digits and words), the
 * second sorts and downloads.
 *
 * <p>Keys of at most 32 significant bits are sorted as 32-bit keys (the high half of word 0);
 * wider keys one 64-bit word at a time, least significant first, each word's sort stable and
 * carrying the order so far as its values (the column gathered into that order first).
 *
 * <p>Not thread-safe: one sorter a sort. Every buffer is released when {@link #sort} returns or
 * throws.
 */
final class VulkanSorter {
  /** Timestamp slots: sort start and end (the download after it), upload start and end. */
  private static final int TS_SORT_START = 0;
  private static final int TS_SORT_END = 1;
  private static final int TS_UPLOAD_START = 2;
  private static final int TS_UPLOAD_END = 3;

  /**
   * With {@code -Dgpusort.vulkan.profile=true}, each step of the sort gets its own timestamps
   * and the step times go to stderr: for tuning, not for production.
   */
  private static final boolean PROFILE = Boolean.getBoolean("gpusort.vulkan.profile");
  private static final int FIRST_PROFILE_SLOT = 4;

  /**
   * With {@code -Dgpusort.vulkan.benchWarmupKeys=K}, the sort submission first sorts the same
   * keys ceil(K / n) times on the device, untimed, then runs the timed
   * sort: the GPU is kept busy so that its clocks have risen when the timed sort runs, as they
   * have in a benchmark that repeats a sort back to back. NVIDIA's driver keeps a Vulkan device
   * that works in short bursts at its idle clock (345 MHz against 1980 on the H200). For
   * benchmarks, not for production.
   */
  private final VulkanContext context;
  private final VulkanShaders shaders;
  private final List<String> profileLabels = new ArrayList<>();
  private final List<VulkanBuffer> buffers = new ArrayList<>();
  /** True while benchmark warm-up rounds are recorded: they get no profile timestamps. */
  private boolean warming;

  /** Device time of the last sort, or NaN where the queue has no timestamps. */
  private double sortNanos = Double.NaN;
  private double uploadNanos = Double.NaN;

  VulkanSorter(VulkanContext context, VulkanShaders shaders) {
    this.context = context;
    this.shaders = shaders;
  }

  double lastSortNanos() {
    return sortNanos;
  }

  double lastUploadNanos() {
    return uploadNanos;
  }

  /**
   * Writes into {@code permutationAddress} the indices (relative to {@code from}) of rows
   * {@code [from, from + count)} of {@code keys} in stable ascending key order; count >= 2.
   */
  void sort(KeyBatch keys, int from, int count, long permutationAddress, Algorithm algorithm) {
    run(keys, from, count, permutationAddress, algorithm, false);
  }

  /**
   * Sorts the keys alone, without a permutation (the benchmark's keys-only case): writes the
   * {@code keys.numRows()} sorted 32-bit keys to {@code sortedKeysAddress}. Keys of at most 32
   * significant bits, radix sort.
   */
  void sortKeysOnly(KeyBatch keys, long sortedKeysAddress) {
    if (keys.keyBits() > 32) {
      throw new IllegalArgumentException("keys-only sorts take keys of at most 32 bits, not "
          + keys.keyBits());
    }
    run(keys, 0, keys.numRows(), sortedKeysAddress, Algorithm.RADIX, true);
  }

  private void run(KeyBatch keys, int from, int count, long outAddress, Algorithm algorithm,
      boolean keysOnly) {
    try {
      int words = (keys.keyBits() + 63) / 64;
      boolean narrow = keys.keyBits() <= 32;
      int uploaded = narrow ? 1 : words;
      VulkanBuffer[] columns = new VulkanBuffer[uploaded];
      VulkanBuffer[] staging = new VulkanBuffer[uploaded];
      for (int w = 0; w < uploaded; w++) {
        staging[w] = buffer(8L * count, BufferKind.UPLOAD);
        HostMemory.copy(keys.words().address() + keys.columnOffset(w) + 8L * from,
            staging[w].mappedAddress(), 8L * count);
        columns[w] = buffer(8L * count, BufferKind.DEVICE);
      }
      int positions = (narrow ? 32 : 64 * words) / VulkanTuning.RADIX_BITS;
      VulkanBuffer hist = buffer(4L * VulkanTuning.RADIX_DIGITS * positions, BufferKind.DEVICE);
      VulkanBuffer histDown =
          buffer(4L * VulkanTuning.RADIX_DIGITS * positions, BufferKind.DOWNLOAD);
      VulkanBuffer narrowKeys = narrow ? buffer(4L * count, BufferKind.DEVICE) : null;

      // Submission 1: upload, then the digit counts of every word.
      try (CommandRecorder rec = context.begin()) {
        boolean timed = context.info().timestamps();
        if (timed) {
          rec.timestamp(TS_UPLOAD_START);
        }
        for (int w = 0; w < uploaded; w++) {
          rec.copy(staging[w], 0, columns[w], 0, 8L * count);
        }
        rec.fill(hist, 0, hist.sizeBytes(), 0);
        rec.barrier();
        if (timed) {
          rec.timestamp(TS_UPLOAD_END);
        }
        if (narrow) {
          rec.dispatch(shaders.extract, push(new long[] {columns[0].deviceAddress(),
              narrowKeys.deviceAddress(), 0L}, count, groups(count, VulkanTuning.WORDS_TILE)),
              groups(count, VulkanTuning.WORDS_TILE));
          rec.barrier();
          histogram(rec, shaders.histU32, narrowKeys, hist, 0, count);
        } else {
          for (int w = 0; w < words; w++) {
            histogram(rec, shaders.histU64, columns[w], hist,
                4L * VulkanTuning.RADIX_DIGITS * WORD_POSITIONS * w, count);
          }
        }
        rec.barrier();
        rec.copy(hist, 0, histDown, 0, hist.sizeBytes());
        rec.submitAndWait();
        uploadNanos = timed ? rec.elapsedNanos(TS_UPLOAD_START, TS_UPLOAD_END) : Double.NaN;
      }
      for (VulkanBuffer b : staging) {
        release(b);
      }
      int[][] passes = activePasses(histDown, narrow ? 1 : words,
          narrow ? NARROW_POSITIONS : WORD_POSITIONS, count);

      VulkanBuffer permDown = buffer(4L * count, BufferKind.DOWNLOAD);
      boolean sorted = false;
      try (CommandRecorder rec = context.begin()) {
        boolean timed = context.info().timestamps();
        long warmupKeys = Long.getLong(VulkanEngine.BENCH_WARMUP_KEYS_PROPERTY, 0);
        int rounds = (int) Math.min(100_000, (warmupKeys + count - 1) / count);
        boolean warmups = rounds > 0;
        if (timed && !warmups) {
          rec.timestamp(TS_SORT_START);
        }
        Plan plan = new Plan(rec, count, narrow, hist, keysOnly);
        if (warmups) {
          warming = true;
          // Wide keys: the sort overwrites its columns, so each round restores them from copies.
          VulkanBuffer[] pristine = new VulkanBuffer[narrow ? 0 : uploaded];
          for (int w = 0; w < pristine.length; w++) {
            pristine[w] = buffer(8L * count, BufferKind.DEVICE);
            rec.copy(columns[w], 0, pristine[w], 0, 8L * count);
          }
          for (int r = 0; r <= rounds; r++) {
            // Each round (and the timed sort after the last) starts from the uploaded keys.
            rec.barrier();
            if (narrow) {
              rec.dispatch(shaders.extract, push(new long[] {columns[0].deviceAddress(),
                  narrowKeys.deviceAddress(), 0L}, count, groups(count, VulkanTuning.WORDS_TILE)),
                  groups(count, VulkanTuning.WORDS_TILE));
            } else if (r > 0) {
              for (int w = 0; w < pristine.length; w++) {
                rec.copy(pristine[w], 0, columns[w], 0, 8L * count);
              }
            }
            rec.barrier();
            if (r < rounds) {
              if (narrow) {
                plan.sortWord(narrowKeys, 0, passes[0], algorithm);
              } else {
                plan.sortWords(columns, passes, algorithm);
              }
              plan.restart();
            }
          }
          warming = false;
          if (timed) {
            rec.timestamp(TS_SORT_START);
          }
        }
        VulkanBuffer result = narrow
            ? plan.sortWord(narrowKeys, 0, passes[0], algorithm)
            : plan.sortWords(columns, passes, algorithm);
        if (timed) {
          rec.timestamp(TS_SORT_END);
        }
        if (keysOnly) {
          rec.barrier();
          rec.copy(plan.sortedKeys(narrowKeys), 0, permDown, 0, 4L * count);
          sorted = true;
        } else if (result != null) {
          rec.barrier();
          rec.copy(result, 0, permDown, 0, 4L * count);
          sorted = true;
        }
        rec.submitAndWait();
        sortNanos = timed ? rec.elapsedNanos(TS_SORT_START, TS_SORT_END) : Double.NaN;
        if (PROFILE && timed) {
          printProfile(rec, count);
        }
      }
      if (!sorted) {
        // Every digit constant: the input order is the sorted order.
        for (int i = 0; i < count; i++) {
          HostMemory.putInt(outAddress + 4L * i, i);
        }
      } else {
        HostMemory.copy(permDown.mappedAddress(), outAddress, 4L * count);
      }
    } finally {
      for (VulkanBuffer b : buffers) {
        b.close();
      }
      buffers.clear();
    }
  }

  private void mark(CommandRecorder rec, String label) {
    int slot = FIRST_PROFILE_SLOT + profileLabels.size();
    if (PROFILE && !warming && context.info().timestamps() && slot < 64) {
      rec.timestamp(slot);
      profileLabels.add(label);
    }
  }

  private void printProfile(CommandRecorder rec, int n) {
    StringBuilder text = new StringBuilder("vulkan sort profile, n=" + n + ":");
    int previous = TS_SORT_START;
    for (int i = 0; i < profileLabels.size(); i++) {
      int slot = FIRST_PROFILE_SLOT + i;
      text.append(String.format(java.util.Locale.ROOT, " %s %.3f", profileLabels.get(i),
          rec.elapsedNanos(previous, slot) / 1e6));
      previous = slot;
    }
    text.append(String.format(java.util.Locale.ROOT, " rest %.3f ms",
        rec.elapsedNanos(previous, TS_SORT_END) / 1e6));
    System.err.println(text);
    profileLabels.clear();
  }

  private VulkanBuffer buffer(long bytes, BufferKind kind) {
    VulkanBuffer b = context.createBuffer(Math.max(4, bytes), kind);
    buffers.add(b);
    return b;
  }

  private void release(VulkanBuffer b) {
    if (b != null && buffers.remove(b)) {
      b.close();
    }
  }

  private static int groups(long items, int perGroup) {
    return (int) ((items + perGroup - 1) / perGroup);
  }

  private void histogram(CommandRecorder rec, VulkanPipeline pipeline, VulkanBuffer keys,
      VulkanBuffer hist, long offsetBytes, int n) {
    int groups = groups(n, VulkanTuning.RADIX_HIST_TILE);
    rec.dispatch(pipeline, push(new long[] {keys.deviceAddress(),
        hist.deviceAddress() + offsetBytes}, n, groups), groups);
  }

  /**
   * The digit positions of each word (index 0: the most significant word) whose digit is not the
   * same for all n keys, least significant first.
   */
  private static int[][] activePasses(VulkanBuffer histDown, int words, int positions, int n) {
    int[][] passes = new int[words][];
    long base = histDown.mappedAddress();
    for (int w = 0; w < words; w++) {
      int[] active = new int[positions];
      int k = 0;
      for (int p = 0; p < positions; p++) {
        boolean constant = false;
        for (int d = 0; d < VulkanTuning.RADIX_DIGITS; d++) {
          int c = HostMemory.getInt(
              base + 4L * ((long) VulkanTuning.RADIX_DIGITS * (positions * w + p) + d));
          if (c == n) {
            constant = true;
            break;
          }
        }
        if (!constant) {
          active[k++] = p;
        }
      }
      passes[w] = java.util.Arrays.copyOf(active, k);
    }
    return passes;
  }

  /** The second submission's recording: buffers are made as the first word needs them. */
  private final class Plan {
    private final CommandRecorder rec;
    private final int n;
    private final boolean narrow;
    private final VulkanBuffer hist;
    private final boolean keysOnly;
    /** The key buffer the last radix pass wrote, or null before any pass. */
    private VulkanBuffer lastKeys;
    private VulkanBuffer spareKeys;
    private VulkanBuffer gathered;
    private final VulkanBuffer[] vals = new VulkanBuffer[2];
    private VulkanBuffer counts;
    private VulkanBuffer chunkSums;
    /** The buffer holding the order so far, or null before the first sorted word. */
    private VulkanBuffer order;

    Plan(CommandRecorder rec, int n, boolean narrow, VulkanBuffer hist, boolean keysOnly) {
      this.rec = rec;
      this.n = n;
      this.narrow = narrow;
      this.hist = hist;
      this.keysOnly = keysOnly;
    }

    /** Forgets the order and keys sorted so far, keeping the buffers, for another sort. */
    void restart() {
      order = null;
      lastKeys = null;
    }

    /** Keys-only sorts: the buffer of the sorted keys (the input when no pass ran). */
    VulkanBuffer sortedKeys(VulkanBuffer input) {
      return lastKeys == null ? input : lastKeys;
    }

    /** Sorts every word, least significant first; the buffer of the permutation, or null. */
    VulkanBuffer sortWords(VulkanBuffer[] columns, int[][] passes, Algorithm algorithm) {
      for (int w = columns.length - 1; w >= 0; w--) {
        if (passes[w].length == 0) {
          continue;
        }
        VulkanBuffer source = columns[w];
        if (order != null) {
          if (gathered == null) {
            gathered = buffer(8L * n, BufferKind.DEVICE);
          }
          int groups = groups(n, VulkanTuning.WORDS_TILE);
          rec.dispatch(shaders.gather, push(new long[] {columns[w].deviceAddress(),
              gathered.deviceAddress(), order.deviceAddress()}, n, groups), groups);
          rec.barrier();
          source = gathered;
        }
        sortWord(source, w, passes[w], algorithm);
      }
      return order;
    }

    /**
     * Sorts (keys, order so far) by one word whose active digit positions are {@code passes};
     * {@code keys} is overwritten. Returns the order after it (null when passes is empty and no
     * word was sorted before).
     */
    VulkanBuffer sortWord(VulkanBuffer keys, int word, int[] passes, Algorithm algorithm) {
      if (passes.length == 0) {
        return order;
      }
      if (spareKeys == null) {
        spareKeys = buffer((narrow ? 4L : 8L) * n, BufferKind.DEVICE);
        if (!keysOnly) {
          vals[0] = buffer(4L * n, BufferKind.DEVICE);
          vals[1] = buffer(4L * n, BufferKind.DEVICE);
        }
      }
      VulkanBuffer[] keyPair = {keys, spareKeys};
      // Values: read from the order so far, or the input positions for the first sorted word.
      VulkanBuffer valsIn = order;
      VulkanBuffer valsOut = order == vals[0] ? vals[1] : vals[0];
      if (algorithm == Algorithm.ODDEVEN) {
        order = oddeven(keyPair, valsIn, valsOut);
      } else {
        order = radix(keyPair, valsIn, valsOut, word, passes);
      }
      return order;
    }

    private VulkanBuffer radix(VulkanBuffer[] keyPair, VulkanBuffer valsIn, VulkanBuffer valsOut,
        int word, int[] passes) {
      int numBlocks = groups(n, shaders.radixTile());
      int numChunks = groups(numBlocks, VulkanTuning.RADIX_SCAN_CHUNK);
      int digits = VulkanTuning.RADIX_DIGITS;
      if (counts == null) {
        counts = buffer(4L * digits * numBlocks, BufferKind.DEVICE);
        chunkSums = buffer(4L * digits * numChunks, BufferKind.DEVICE);
      }
      VulkanPipeline upsweep = shaders.upsweep(narrow);
      VulkanPipeline scatter = shaders.scatter(narrow);
      int positions = narrow ? NARROW_POSITIONS : WORD_POSITIONS;
      int cur = 0;
      VulkanBuffer vIn = valsIn;
      VulkanBuffer vOut = valsOut;
      for (int i = 0; i < passes.length; i++) {
        int shift = VulkanTuning.RADIX_BITS * passes[i];
        long digitTotals = hist.deviceAddress() + 4L * digits * (positions * word + passes[i]);
        rec.dispatch(upsweep, push(new long[] {keyPair[cur].deviceAddress(),
            counts.deviceAddress()}, n, shift, numBlocks), numBlocks);
        rec.barrier();
        int scanGroups = digits * numChunks;
        rec.dispatch(shaders.reduce, push(new long[] {counts.deviceAddress(),
            chunkSums.deviceAddress()}, numBlocks, numChunks, scanGroups), scanGroups);
        rec.barrier();
        mark(rec, "counts");
        rec.dispatch(shaders.scan, push(new long[] {counts.deviceAddress(),
            chunkSums.deviceAddress(), digitTotals}, numBlocks, numChunks, scanGroups), scanGroups);
        rec.barrier();
        mark(rec, "scan");
        int mode = keysOnly ? VALS_NONE : vIn == null ? VALS_IOTA : VALS_READ;
        rec.dispatch(scatter, push(new long[] {keyPair[cur].deviceAddress(),
            keyPair[1 - cur].deviceAddress(), vIn == null ? 0L : vIn.deviceAddress(),
            vOut == null ? 0L : vOut.deviceAddress(), counts.deviceAddress()}, n, shift,
            numBlocks, mode), numBlocks);
        rec.barrier();
        mark(rec, "scatter");
        lastKeys = keyPair[1 - cur];
        cur = 1 - cur;
        vIn = vOut;
        vOut = other(vOut);
      }
      return vIn;
    }

    private VulkanBuffer oddeven(VulkanBuffer[] keyPair, VulkanBuffer valsIn,
        VulkanBuffer valsOut) {
      VulkanPipeline blockSort = narrow ? shaders.blockSortU32 : shaders.blockSortU64;
      VulkanPipeline merge = narrow ? shaders.mergeU32 : shaders.mergeU64;
      int tiles = groups(n, VulkanTuning.ODDEVEN_TILE);
      int mode = valsIn == null ? VALS_IOTA : VALS_READ;
      rec.dispatch(blockSort, push(new long[] {keyPair[0].deviceAddress(),
          valsIn == null ? 0L : valsIn.deviceAddress(), keyPair[1].deviceAddress(),
          valsOut.deviceAddress()}, n, mode, tiles), tiles);
      rec.barrier();
      mark(rec, "blocksort");
      int cur = 1;
      VulkanBuffer vCur = valsOut;
      for (long run = VulkanTuning.ODDEVEN_TILE; run < n; run *= 2) {
        VulkanBuffer vNext = other(vCur);
        rec.dispatch(merge, push(new long[] {keyPair[cur].deviceAddress(),
            vCur.deviceAddress(), keyPair[1 - cur].deviceAddress(), vNext.deviceAddress()}, n,
            (int) run, tiles), tiles);
        rec.barrier();
        mark(rec, "merge");
        cur = 1 - cur;
        vCur = vNext;
      }
      return vCur;
    }

    private VulkanBuffer other(VulkanBuffer v) {
      return v == vals[0] ? vals[1] : vals[0];
    }
  }

  /** Digit positions of a 32-bit key and of one 64-bit word. */
  private static final int NARROW_POSITIONS = 32 / VulkanTuning.RADIX_BITS;
  private static final int WORD_POSITIONS = 64 / VulkanTuning.RADIX_BITS;

  /** Value modes of the shaders (common.glsl). */
  private static final int VALS_NONE = 0;
  private static final int VALS_IOTA = 1;
  private static final int VALS_READ = 2;
}
