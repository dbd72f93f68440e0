package io.gpusort.engine.cuda;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gpusort.TestSeeds;
import io.gpusort.config.GpuSortConf.Algorithm;
import io.gpusort.config.GpuSortConf.EngineChoice;
import io.gpusort.engine.EngineOptions;
import io.gpusort.engine.Engines;
import io.gpusort.engine.KeyBatch;
import io.gpusort.engine.RandomRecords;
import io.gpusort.engine.RowArrival;
import io.gpusort.engine.RowPages;
import io.gpusort.engine.RowUpload;
import io.gpusort.memory.HostBuffer;
import io.gpusort.memory.HostMemory;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** What the reference suite does not reach: pieces over the memory budget, release, huge inputs. */
@Tag("gpu")
class CudaEngineExtraTest {
  private static final long SEED = TestSeeds.baseSeed();

  /**
   * The engine handed to tasks (shared per process) gathers rows on the device, as the CUDA engine
   * itself does: the row path asks the shared one.
   */
  @org.junit.jupiter.api.Test
  void sharedEngineGathersRowsOnTheDevice() {
    CudaEngineTest.openOrSkip(EngineOptions.defaults(EngineChoice.CUDA)).close();
    io.gpusort.engine.SortEngine shared = Engines.create(EngineOptions.defaults(EngineChoice.CUDA));
    assertEquals("cuda", shared.name());
    assertTrue(shared.gathersRowsOnDevice(), "the shared engine does not gather on the device");
  }

  /**
   * Pages sent ahead while "the run is taken in" are the ones the gather uses (none sent twice),
   * and the stream read page by page as it arrives equals the host's gather; the upload's and the
   * gather's device memory all goes back. Page-locked pages, as the row path has them.
   */
  @org.junit.jupiter.api.Test
  void pagesSentAheadAreGatheredAndStreamBack() {
    int n = 400_000;
    SplittableRandom random = new SplittableRandom(SEED);
    try (CudaEngine engine = CudaEngineTest.openOrSkip(EngineOptions.defaults(EngineChoice.CUDA));
        RandomRecords records = new RandomRecords(HostBuffer::acquireTransferable);
        RowUpload upload = engine.openRowUpload()) {
      // Each page is sent as soon as it is full, as the row store's listener does.
      RowPages rows = records.write(random, n, 8, 160, 1L << 20, upload::add);
      assertTrue(rows.page(0).isPinned(), "pages are not page-locked");
      assertEquals(rows.numPages() - 1, upload.numPages(), "pages sent ahead");
      HostBuffer permutation = records.shuffle(random);
      byte[] expected = records.expectedStream();
      try (RowArrival arrival = engine.gatherRows(rows, permutation, upload)) {
        upload.close();
        assertTrue(arrival != null, "the engine declined the gather");
        assertEquals(0, upload.numPages(), "the upload still holds pages after the gather");
        // Nothing read yet: once the copies are done, polling gives the device memory back.
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (engine.deviceBytesInUse() > 0 && System.nanoTime() < deadline) {
          arrival.poll();
          Thread.onSpinWait();
        }
        assertEquals(0, engine.deviceBytesInUse(), "device memory held after every row was back");
        byte[] actual = records.readStream(arrival);
        arrival.close();
        assertTrue(arrival.fromDeviceNanos() > 0, "the copies back were not timed");
        int mismatch = java.util.Arrays.mismatch(expected, actual);
        assertEquals(-1, mismatch,
            "sorted stream differs from byte " + mismatch + ", seed " + SEED);
        assertEquals(0, engine.deviceBytesInUse(), "device memory still held");
      }
    }
  }

  /**
   * Rows staged as the intake stages them: each page sent in stretches through a page-locked
   * staging buffer reused once its copy is done, the page itself then holding garbage. The
   * device's gather streams them back in order; or, where the host must read them first, {@code
   * restorePages} brings every page back as it was. The device memory all goes back.
   */
  @ParameterizedTest
  @org.junit.jupiter.params.provider.ValueSource(booleans = {true, false})
  void stagedRowsAreGatheredOrBroughtBack(boolean gather) {
    int n = 400_000;
    SplittableRandom random = new SplittableRandom(SEED);
    try (CudaEngine engine = CudaEngineTest.openOrSkip(EngineOptions.defaults(EngineChoice.CUDA));
        RandomRecords records = new RandomRecords(HostBuffer::acquireTransferable);
        RowUpload upload = engine.openRowUpload();
        HostBuffer stagingA = HostBuffer.acquireTransferable(64 << 10);
        HostBuffer stagingB = HostBuffer.acquireTransferable(64 << 10)) {
      assertTrue(upload.takesStagedRows() && upload.canSendFrom(stagingA));
      RowPages rows = records.write(random, n, 8, 160, 1L << 20, null);
      HostBuffer permutation = records.shuffle(random);
      byte[] expected = records.expectedStream();
      byte[][] original = new byte[rows.numPages()][];
      HostBuffer[] staging = {stagingA, stagingB};
      int stretches = 0;
      for (int k = 0; k < rows.numPages(); k++) {
        HostBuffer page = rows.page(k);
        long used = rows.usedBytes(k);
        original[k] = new byte[(int) used];
        HostMemory.copy(null, page.address(), original[k], HostMemory.BYTE_ARRAY_OFFSET, used);
        for (long at = 0; at < used; at += 64 << 10) {
          HostBuffer buffer = staging[stretches++ % 2];
          upload.awaitRead(buffer);
          long length = Math.min(64 << 10, used - at);
          HostMemory.copy(page.address() + at, buffer.address(), length);
          assertTrue(upload.send(page, at, buffer, 0, length), "stretch refused");
        }
        HostMemory.fill(page.address(), used, (byte) 0x5A);
      }
      if (gather) {
        try (RowArrival arrival = engine.gatherRows(rows, permutation, upload)) {
          assertTrue(arrival != null, "the engine declined the gather");
          byte[] actual = records.readStream(arrival);
          int mismatch = java.util.Arrays.mismatch(expected, actual);
          assertEquals(-1, mismatch,
              "sorted stream differs from byte " + mismatch + ", seed " + SEED);
        }
      } else {
        upload.restorePages();
        for (int k = 0; k < rows.numPages(); k++) {
          byte[] back = new byte[original[k].length];
          HostMemory.copy(null, rows.page(k).address(), back, HostMemory.BYTE_ARRAY_OFFSET,
              back.length);
          assertArrayEquals(original[k], back, "page " + k + " not brought back");
        }
      }
      upload.close();
      assertEquals(0, engine.deviceBytesInUse(), "device memory still held");
    }
  }

  /**
   * A budget far under the batch: the engine sorts pieces on the device and merges them on the
   * host, with the CPU engine's result (stability included).
   */
  @ParameterizedTest
  @EnumSource(value = Algorithm.class, names = {"RADIX", "ODDEVEN"})
  void piecesOverTheBudgetMergeOnTheHost(Algorithm algorithm) {
    int n = 6_000_000;
    EngineOptions options = EngineOptions.defaults(EngineChoice.CUDA).withAlgorithm(algorithm)
        .withDeviceMemoryBudget(128L << 20);
    try (CudaEngine engine = CudaEngineTest.openOrSkip(options);
        HostBuffer words = HostBuffer.allocate(8L * n * 2);
        HostBuffer gpu = HostBuffer.allocate(4L * n)) {
      assumeTrue(engine.deviceBudgetBytes() == 128L << 20,
          "the device was opened earlier in this JVM with another budget");
      SplittableRandom random = new SplittableRandom(SEED);
      KeyBatch keys = new KeyBatch(words, n, 2, 100);
      for (int r = 0; r < n; r++) {
        keys.setWord(r, 0, random.nextLong(1000));  // many equal first words
        keys.setWord(r, 1, random.nextLong() & (-1L << 28));
      }
      engine.sort(keys, gpu);
      assertSameAsCpu(keys, gpu, "seed " + SEED);
      assertEquals(0, engine.deviceBytesInUse());
    }
  }

  /**
   * Several batches in one call run pipelined on two streams (upload of one, sort of another,
   * download of a third); each must come out as the CPU engine sorts it alone. Page-locked and
   * plain buffers mixed, every key width, both algorithms.
   */
  @ParameterizedTest
  @EnumSource(value = Algorithm.class, names = {"RADIX", "ODDEVEN"})
  void pipelinedBatchesMatchTheCpuEngine(Algorithm algorithm) {
    int[] rows = {300_000, 1, 70_001, 0, 1_000_000, 4097, 250_000};
    int[] keyBits = {64, 64, 13, 64, 40, 128, 100};
    List<HostBuffer> held = new ArrayList<>();
    try (CudaEngine engine = CudaEngineTest.openOrSkip(
        EngineOptions.defaults(EngineChoice.CUDA).withAlgorithm(algorithm))) {
      List<KeyBatch> batches = new ArrayList<>();
      List<HostBuffer> gpu = new ArrayList<>();
      SplittableRandom random = new SplittableRandom(SEED);
      for (int b = 0; b < rows.length; b++) {
        int n = rows[b];
        int words = (keyBits[b] + 63) / 64;
        boolean pinned = b % 2 == 0;
        HostBuffer w = pinned ? HostBuffer.acquireTransferable(8L * n * words + 8)
            : HostBuffer.allocate(8L * n * words + 8);
        HostBuffer g = pinned ? HostBuffer.acquireTransferable(4L * n + 4)
            : HostBuffer.allocate(4L * n + 4);
        held.add(w);
        held.add(g);
        KeyBatch keys = new KeyBatch(w, n, words, keyBits[b]);
        for (int r = 0; r < n; r++) {
          for (int word = 0; word < words; word++) {
            int bits = Math.min(64, keyBits[b] - 64 * word);
            long value = random.nextInt(3) == 0 ? random.nextLong(16) : random.nextLong();
            keys.setWord(r, word, bits == 64 ? value : value << (64 - bits));
          }
        }
        batches.add(keys);
        gpu.add(g);
      }
      engine.sortAll(batches, gpu);
      for (int b = 0; b < rows.length; b++) {
        assertSameAsCpu(batches.get(b), gpu.get(b), "batch " + b + " of " + rows[b] + " rows, "
            + keyBits[b] + " bits, seed " + SEED);
      }
      assertEquals(0, engine.deviceBytesInUse());
    } finally {
      for (HostBuffer buffer : held) {
        buffer.close();
      }
    }
  }

  /**
   * Tasks share one engine: six threads sort at once through a bound of two concurrent GPU tasks,
   * each batch with the CPU engine's result, and no device memory is left held.
   */
  @Test
  void concurrentTasksShareTheDevice() throws Exception {
    EngineOptions options = EngineOptions.defaults(EngineChoice.CUDA)
        .withAlgorithm(Algorithm.RADIX);
    options = new EngineOptions(options.engine(), options.algorithm(), options.cudaDevice(),
        options.deviceMemoryBudgetBytes(), 2);
    try (CudaEngine engine = CudaEngineTest.openOrSkip(options)) {
      ExecutorService pool = Executors.newFixedThreadPool(6);
      try {
        List<Future<?>> futures = new ArrayList<>();
        for (int t = 0; t < 6; t++) {
          int task = t;
          futures.add(pool.submit(() -> {
            for (int round = 0; round < 4; round++) {
              sortAndCompare(engine, 200_000 + 7919 * task + round, 64 - 8 * (task % 3),
                  SEED + 31L * task + round);
            }
            return null;
          }));
        }
        for (Future<?> f : futures) {
          f.get();
        }
      } finally {
        pool.shutdown();
      }
      assertEquals(0, engine.deviceBytesInUse());
    }
  }

  private static void sortAndCompare(CudaEngine engine, int n, int keyBits, long seed) {
    try (HostBuffer words = HostBuffer.allocate(8L * n);
        HostBuffer gpu = HostBuffer.allocate(4L * n)) {
      KeyBatch keys = new KeyBatch(words, n, 1, keyBits);
      SplittableRandom random = new SplittableRandom(seed);
      long mask = keyBits == 64 ? -1L : -1L << (64 - keyBits);
      for (int r = 0; r < n; r++) {
        keys.setWord(r, 0, random.nextLong() & mask);
      }
      engine.sort(keys, gpu);
      assertSameAsCpu(keys, gpu, n + " rows, " + keyBits + " bits, seed " + seed);
    }
  }

  /** {@code gpuPermutation} is the permutation the CPU engine gives {@code keys}. */
  private static void assertSameAsCpu(KeyBatch keys, HostBuffer gpuPermutation, String context) {
    int n = keys.numRows();
    try (HostBuffer cpu = HostBuffer.allocate(4L * n + 4)) {
      Engines.cpu().sort(keys, cpu);
      int[] expected = new int[n];
      int[] actual = new int[n];
      HostMemory.copyToArray(cpu.address(), expected, 0, n);
      HostMemory.copyToArray(gpuPermutation.address(), actual, 0, n);
      assertArrayEquals(expected, actual, context);
    }
  }

  /** Closing the last engine of a device frees all of its device memory. */
  @Test
  void closingFreesTheDevice() {
    assumeTrue(CudaDevice.openDevices() == 0, "a device is held by another engine in this JVM");
    CudaEngine engine =
        CudaEngineTest.openOrSkip(EngineOptions.defaults(EngineChoice.CUDA));
    int n = 100_000;
    try (HostBuffer words = HostBuffer.allocate(8L * n);
        HostBuffer perm = HostBuffer.allocate(4L * n)) {
      KeyBatch keys = new KeyBatch(words, n, 1, 64);
      SplittableRandom random = new SplittableRandom(SEED);
      for (int r = 0; r < n; r++) {
        keys.setWord(r, 0, random.nextLong());
      }
      engine.sort(keys, perm);
      assertTrue(engine.deviceBytesAllocated() > 0);
    } finally {
      engine.close();
    }
    assertEquals(0, CudaDevice.openDevices());
    assertEquals(0, engine.deviceBytesAllocated(), "device memory left after close");
  }

  /**
   * Sizes up to 1e9 rows, on the GPU host only ({@code -Dgpusort.test.largeRows=1000000000}):
   * random 64-bit keys, checked for order, stability and being a permutation.
   */
  @ParameterizedTest
  @EnumSource(value = Algorithm.class, names = {"RADIX", "ODDEVEN"})
  void largeRows(Algorithm algorithm) {
    int n = Integer.getInteger("gpusort.test.largeRows", 0);
    assumeTrue(n > 0, "set gpusort.test.largeRows to run (needs about 13 bytes of host memory "
        + "per row)");
    try (CudaEngine engine = CudaEngineTest.openOrSkip(
            EngineOptions.defaults(EngineChoice.CUDA).withAlgorithm(algorithm));
        HostBuffer words = HostBuffer.acquireTransferable(8L * n);
        HostBuffer perm = HostBuffer.acquireTransferable(4L * n)) {
      KeyBatch keys = new KeyBatch(words, n, 1, 64);
      long base = words.address();
      IntStream.range(0, 64).parallel().forEach(part -> {
        SplittableRandom random = new SplittableRandom(SEED + part);
        long from = (long) n * part / 64;
        long to = (long) n * (part + 1) / 64;
        for (long r = from; r < to; r++) {
          // A quarter of the keys repeat a small set, so that stability is exercised.
          long key = random.nextInt(4) == 0 ? random.nextLong(1 << 16) : random.nextLong();
          HostMemory.putLong(base + 8 * r, key);
        }
      });
      long start = System.nanoTime();
      engine.sort(keys, perm);
      long sortMillis = (System.nanoTime() - start) / 1_000_000;
      checkLarge(keys, perm, n);
      System.out.printf("cuda %s: %d rows sorted in %d ms (checked)%n", algorithm, n, sortMillis);
    }
  }

  private static void checkLarge(KeyBatch keys, HostBuffer perm, int n) {
    long permBase = perm.address();
    long[] seen = new long[(n + 63) / 64];
    for (int i = 0; i < n; i++) {
      int row = HostMemory.getInt(permBase + 4L * i);
      if (row < 0 || row >= n || (seen[row >>> 6] & (1L << row)) != 0) {
        fail("position " + i + " holds row " + row + ": not a permutation (seed " + SEED + ")");
      }
      seen[row >>> 6] |= 1L << row;
    }
    int bad = IntStream.range(1, n).parallel().filter(i -> {
      int a = HostMemory.getInt(permBase + 4L * (i - 1));
      int b = HostMemory.getInt(permBase + 4L * i);
      int c = Long.compareUnsigned(keys.word(a, 0), keys.word(b, 0));
      return c > 0 || (c == 0 && a > b);
    }).findFirst().orElse(-1);
    assertEquals(-1, bad, "order or stability broken at position " + bad + " (seed " + SEED + ")");
  }
}
