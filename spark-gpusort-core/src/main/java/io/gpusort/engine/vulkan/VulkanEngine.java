package io.gpusort.engine.vulkan;

import io.gpusort.config.GpuSortConf.Algorithm;
import io.gpusort.engine.DevicePieces;
import io.gpusort.engine.EngineException;
import io.gpusort.engine.EngineOptions;
import io.gpusort.engine.KeyBatch;
import io.gpusort.engine.SortEngine;
import io.gpusort.memory.HostBuffer;
import java.util.Optional;
import java.util.concurrent.Semaphore;

/**
 * The Vulkan engine: sorts (key, row) pairs with compute shaders (LSD radix sort, reduce then
 * scan, constant digits skipped; or the odd-even hybrid: Batcher tiles, then merge-path passes)
 * on one Vulkan device, reached through buffer device addresses.
 *
 * <p>The device is {@code spark.gpusort.vulkan.device} when set, else the best hardware device
 * (discrete first). A software device such as lavapipe is taken only when named explicitly or
 * when {@code spark.gpusort.vulkan.allowSoftware} is true (the tests do, to run the shaders in
 * CI). A batch larger than a device piece (the device's largest buffer, or the memory budget) is
 * sorted in pieces that the host merges.
 *
 * <p>Thread-safe: tasks share the engine, at most {@code concurrentGpuTasks} on the device at once.
 */
public final class VulkanEngine implements SortEngine {
  /** Device memory a sort may hold when no budget is configured. */
  static final long DEFAULT_BUDGET_BYTES = 4L << 30;
  /** Device bytes per row beyond the key columns: spare and gathered keys, two value arrays. */
  private static final long EXTRA_DEVICE_BYTES_PER_ROW = 8 + 8 + 8 + 2;

  private final EngineOptions options;
  private final VulkanContext context;
  private final VulkanShaders shaders;
  private final Semaphore slots;
  private volatile boolean closed;
  /**
   * System property for benchmarks: keys to sort, untimed, on the device before each timed sort
   * (in the same submission), so that the GPU's clocks have risen; see VulkanSorter. 0 or unset
   * in production.
   */
  public static final String BENCH_WARMUP_KEYS_PROPERTY = "gpusort.vulkan.benchWarmupKeys";

  /**
   * System property for comparisons: {@code false} keeps the two-bit-split radix scatter on a
   * device that could rank with subgroup ballots (VulkanDeviceInfo#ballotRanking).
   */
  public static final String BALLOT_RANKING_PROPERTY = "gpusort.vulkan.ballotRanking";

  private volatile double lastSortNanos = Double.NaN;
  private volatile double lastUploadNanos = Double.NaN;

  /**
   * Opens the device the options choose.
   *
   * @throws EngineException when no device qualifies or the device, its shaders or pipelines
   *     cannot be set up
   */
  public VulkanEngine(EngineOptions options) {
    this(options, !"false".equals(System.getProperty(BALLOT_RANKING_PROPERTY)));
  }

  /**
   * {@link #VulkanEngine(EngineOptions)}; with {@code ballotRanking} false the radix passes use
   * the two-bit-split scatter even where the device could rank with subgroup ballots (the tests
   * keep that path covered on devices that take the other).
   */
  VulkanEngine(EngineOptions options, boolean ballotRanking) {
    if (!Vulkan.available()) {
      throw new EngineException("no Vulkan: " + Vulkan.unavailableReason());
    }
    Optional<VulkanDeviceInfo> device =
        Vulkan.choose(options.vulkanDevice(), options.vulkanAllowSoftware());
    if (device.isEmpty()) {
      throw new EngineException("no usable Vulkan device" + (options.vulkanDevice() >= 0
          ? " at index " + options.vulkanDevice() : "") + ": " + describeDevices());
    }
    this.options = options;
    VulkanContext opened = null;
    try {
      opened = VulkanContext.open(device.get(), options.vulkanDebug());
      this.shaders = new VulkanShaders(opened, ballotRanking && opened.info().ballotRanking());
    } catch (RuntimeException | LinkageError e) {
      if (opened != null) {
        opened.close();
      }
      if (e instanceof EngineException ee) {
        throw ee;
      }
      throw new EngineException("Vulkan device " + device.get().name() + " could not be set up: "
          + e, e);
    }
    this.context = opened;
    this.slots = new Semaphore(options.concurrentGpuTasks(), true);
  }

  /** Whether a hardware Vulkan device (not a software one) is usable here: what auto needs. */
  public static boolean hardwareAvailable() {
    return Vulkan.available() && Vulkan.choose(-1, false).isPresent();
  }

  /** Why {@link #hardwareAvailable()} is false, or null. */
  public static String unavailableReason() {
    if (!Vulkan.available()) {
      return Vulkan.unavailableReason();
    }
    return hardwareAvailable() ? null : "no usable hardware Vulkan device: " + describeDevices();
  }

  private static String describeDevices() {
    StringBuilder text = new StringBuilder();
    for (VulkanDeviceInfo d : Vulkan.devices()) {
      text.append(text.length() == 0 ? "" : "; ").append(d.index()).append(' ').append(d.name())
          .append(" (").append(d.type()).append(d.usable() ? ", usable" : ", " + d.unusableReason())
          .append(')');
    }
    return text.length() == 0 ? "the loader lists no device" : text.toString();
  }

  @Override
  public String name() {
    return "vulkan";
  }

  /** The device the engine runs on. */
  public VulkanDeviceInfo deviceInfo() {
    return context.info();
  }

  /** The device's name, index and type, for logs. */
  public String deviceDescription() {
    VulkanDeviceInfo d = context.info();
    return d.name() + " (Vulkan device " + d.index() + ", " + d.type() + ", " + d.driverName() + ")";
  }

  /** The memory types the engine's buffers take on this device, for benchmarks and logs. */
  public String memoryDescription() {
    return context.describeMemory();
  }

  /** Device memory held by this engine's buffers (sorts in progress). */
  public long deviceBytesInUse() {
    return context.bytesAllocated();
  }

  /** Device time of the last sort's shaders (upload and download excluded), NaN if unknown. */
  public double lastSortNanos() {
    return lastSortNanos;
  }

  /** Device time of the last sort's host-to-device copy, NaN if unknown. */
  public double lastUploadNanos() {
    return lastUploadNanos;
  }

  @Override
  public void sort(KeyBatch keys, HostBuffer permutation) {
    if (closed) {
      throw new IllegalStateException("engine closed");
    }
    if (DevicePieces.checkAndSortTrivial(keys, permutation)) {
      return;
    }
    int n = keys.numRows();
    try {
      slots.acquire();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new EngineException("interrupted while waiting for the Vulkan device", e);
    }
    try {
      int rowsPerPiece = rowsPerPiece(keys);
      if (n <= rowsPerPiece) {
        sortPiece(keys, 0, n, permutation.address());
      } else {
        DevicePieces.sortAndMerge(keys, rowsPerPiece, permutation,
            (from, count) -> sortPiece(keys, from, count, permutation.address() + 4L * from));
      }
    } catch (EngineException e) {
      throw e;
    } catch (RuntimeException e) {
      throw new EngineException("Vulkan sort of " + n + " rows failed: " + e, e);
    } finally {
      slots.release();
    }
  }

  /**
   * Sorts keys of at most 32 significant bits without a permutation, writing the sorted 32-bit
   * keys (the high halves of word 0) to {@code sortedKeys}: the benchmark's keys-only case (the
   * product always sorts with the permutation). One device piece at most.
   */
  public void sortKeysOnly(KeyBatch keys, HostBuffer sortedKeys) {
    if (sortedKeys.sizeBytes() < 4L * keys.numRows()) {
      throw new IllegalArgumentException("output of " + sortedKeys.sizeBytes()
          + " bytes is too small for " + keys.numRows() + " keys");
    }
    int rowsPerPiece = rowsPerPiece(keys);
    if (keys.numRows() > rowsPerPiece) {
      throw new IllegalArgumentException(keys.numRows() + " keys exceed one device piece of "
          + rowsPerPiece + " rows");
    }
    VulkanSorter sorter = new VulkanSorter(context, shaders);
    sorter.sortKeysOnly(keys, sortedKeys.address());
    lastSortNanos = sorter.lastSortNanos();
    lastUploadNanos = sorter.lastUploadNanos();
  }

  /**
   * Device time, in nanoseconds, of one {@code vkCmdCopyBuffer} of {@code bytes} between two
   * device-local buffers (median of {@code reps}): the benchmark's memory baseline. NaN where the
   * queue has no timestamps.
   */
  public double timeDeviceCopy(long bytes, int reps) {
    try (VulkanBuffer from = context.createBuffer(bytes, VulkanContext.BufferKind.DEVICE);
        VulkanBuffer to = context.createBuffer(bytes, VulkanContext.BufferKind.DEVICE)) {
      return medianDeviceNanos(reps, rec -> rec.copy(from, 0, to, 0, bytes));
    }
  }

  /**
   * Device time, in nanoseconds, of the word-extraction shader over {@code items} 64-bit words
   * (8 bytes read and 4 written an item; median of {@code reps}): the benchmark's baseline for a
   * shader streaming through device memory, beside {@link #timeDeviceCopy}. NaN where the queue
   * has no timestamps.
   */
  public double timeShaderStream(int items, int reps) {
    int groups = (items + VulkanTuning.WORDS_TILE - 1) / VulkanTuning.WORDS_TILE;
    try (VulkanBuffer words = context.createBuffer(8L * items, VulkanContext.BufferKind.DEVICE);
        VulkanBuffer halves = context.createBuffer(4L * items, VulkanContext.BufferKind.DEVICE)) {
      return medianDeviceNanos(reps, rec -> rec.dispatch(shaders.extract,
          VulkanShaders.push(new long[] {words.deviceAddress(), halves.deviceAddress(), 0L},
              items, groups), groups));
    }
  }

  /** Median device time of {@code work} over {@code reps} submissions, after one warm-up. */
  private double medianDeviceNanos(int reps, java.util.function.Consumer<CommandRecorder> work) {
    if (!context.info().timestamps()) {
      return Double.NaN;
    }
    double[] nanos = new double[reps];
    for (int r = -1; r < reps; r++) {
      try (CommandRecorder rec = context.begin()) {
        rec.timestamp(0);
        work.accept(rec);
        rec.timestamp(1);
        rec.submitAndWait();
        if (r >= 0) {
          nanos[r] = rec.elapsedNanos(0, 1);
        }
      }
    }
    java.util.Arrays.sort(nanos);
    return nanos[reps / 2];
  }

  /** Rows whose sort fits one device piece: the largest buffer and the memory budget. */
  int rowsPerPiece(KeyBatch keys) {
    int words = keys.keyBits() <= 32 ? 1 : (keys.keyBits() + 63) / 64;
    long budget = options.deviceMemoryBudgetBytes() > 0 ? options.deviceMemoryBudgetBytes()
        : DEFAULT_BUDGET_BYTES;
    long bytesPerRow = 8L * words + EXTRA_DEVICE_BYTES_PER_ROW;
    long rows = Math.min(context.info().maxBufferBytes() / 8, budget / bytesPerRow);
    return (int) Math.max(1 << 16, Math.min(rows, KeyBatch.MAX_ROWS));
  }

  private void sortPiece(KeyBatch keys, int from, int count, long permutationAddress) {
    if (count <= 1) {
      DevicePieces.fillIdentity(permutationAddress, count);
      return;
    }
    VulkanSorter sorter = new VulkanSorter(context, shaders);
    sorter.sort(keys, from, count, permutationAddress, chooseAlgorithm());
    lastSortNanos = sorter.lastSortNanos();
    lastUploadNanos = sorter.lastUploadNanos();
  }

  /**
   * Radix unless odd-even is asked for: the Vulkan odd-even shaders are the plain version (one
   * barrier a network stage), slower than the radix sort at every size.
   */
  private Algorithm chooseAlgorithm() {
    return options.algorithm() == Algorithm.ODDEVEN ? Algorithm.ODDEVEN : Algorithm.RADIX;
  }

  @Override
  public void close() {
    if (!closed) {
      closed = true;
      shaders.close();
      context.close();
    }
  }
}
