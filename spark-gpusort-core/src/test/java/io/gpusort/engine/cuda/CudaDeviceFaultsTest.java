package io.gpusort.engine.cuda;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpusort.TestSeeds;
import io.gpusort.config.GpuSortConf.EngineChoice;
import io.gpusort.engine.EngineOptions;
import io.gpusort.engine.EngineStats;
import io.gpusort.engine.Engines;
import io.gpusort.engine.KeyBatch;
import io.gpusort.engine.RandomRecords;
import io.gpusort.engine.RowArrival;
import io.gpusort.engine.RowPages;
import io.gpusort.engine.RowUpload;
import io.gpusort.engine.SortedRunsInput;
import io.gpusort.engine.cuda.DeviceFaults.Phase;
import io.gpusort.memory.HostBuffer;
import io.gpusort.memory.HostMemory;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Device memory failures injected in each phase of the CUDA engine's work ({@link DeviceFaults}):
 * a sort tries again (after a wait where another task holds memory, then in smaller pieces) and
 * gives the CPU engine's order; a merge of runs becomes a sort; a gather waits once, then declines
 * with the pages as they were. Every case ends with no device memory held. Skipped, visibly,
 * where no CUDA device works.
 */
@Tag("gpu")
class CudaDeviceFaultsTest {
  private static final long SEED = TestSeeds.baseSeed();

  private static CudaEngine cuda;

  @BeforeAll
  static void open() {
    cuda = CudaEngineTest.openOrSkip(EngineOptions.defaults(EngineChoice.CUDA));
  }

  @AfterAll
  static void close() {
    if (cuda != null) {
      cuda.close();
    }
  }

  @AfterEach
  void nothingPendingNorHeld() {
    int pending = 0;
    for (Phase phase : Phase.values()) {
      pending += DeviceFaults.pending(phase);
    }
    DeviceFaults.clear();
    assertEquals(0, pending, "failures asked for were not met");
    assertEquals(0, cuda.deviceBytesInUse(), "device bytes still held");
  }

  /** One failure in each phase of a sort, keys of one word and of two: the CPU engine's order. */
  @ParameterizedTest
  @EnumSource(value = Phase.class, names = {"UPLOAD", "SORT", "DOWNLOAD"})
  void aSortMeetsAFailureAndTriesAgain(Phase phase) {
    for (int keyBits : new int[] {64, 100}) {
      for (int n : new int[] {100_000, 3_000_000}) {
        long injected = DeviceFaults.injected(phase);
        long retries = EngineStats.deviceRetries();
        DeviceFaults.failNext(phase, 1);
        sortAndCompare(n, keyBits, SEED + n + keyBits, phase + ", " + n + " rows, " + keyBits
            + " bits");
        assertEquals(injected + 1, DeviceFaults.injected(phase), "the failure was not met");
        assertEquals(retries + 1, EngineStats.deviceRetries(), "the retry was not counted");
      }
    }
  }

  /** Failures again and again: pieces half the size each time, merged on the host. */
  @Test
  void repeatedFailuresSortInSmallerPieces() {
    long injected = DeviceFaults.injected(Phase.UPLOAD);
    DeviceFaults.failNext(Phase.UPLOAD, 4);
    sortAndCompare(2_000_000, 64, SEED + 1, "four failed uploads");
    assertEquals(injected + 4, DeviceFaults.injected(Phase.UPLOAD));
  }

  /** Failures without end: past the smallest pieces, the caller gets the failure. */
  @Test
  void failuresWithoutEndReachTheCaller() {
    int n = 1_000_000;
    try (HostBuffer words = HostBuffer.allocate(8L * n);
        HostBuffer permutation = HostBuffer.allocate(4L * n)) {
      KeyBatch keys = randomKeys(words, n, 64, SEED + 2);
      DeviceFaults.failNext(Phase.SORT, Integer.MAX_VALUE);
      assertThrows(DeviceMemoryExhaustedException.class, () -> cuda.sort(keys, permutation));
      DeviceFaults.clear();
      // The workspace is still usable.
      cuda.sort(keys, permutation);
      assertSameAsCpu(keys, permutation, "after the failures");
    }
  }

  /** A merge of sorted runs whose memory fails is the sort of the same keys. */
  @Test
  void aMergeThatFailsSortsInstead() {
    int n = 1_000_000;
    SplittableRandom random = new SplittableRandom(SEED + 3);
    int[] runStarts = SortedRunsInput.runStarts(random, n, 16, false);
    try (HostBuffer words = HostBuffer.acquireTransferable(8L * n);
        HostBuffer permutation = HostBuffer.acquireTransferable(4L * n)) {
      KeyBatch keys = SortedRunsInput.batch(words, random, n, runStarts,
          SortedRunsInput.Keys.RANDOM, 64);
      long merged = EngineStats.mergedRows();
      DeviceFaults.failNext(Phase.SORT, 1);
      cuda.sortRuns(keys, runStarts, permutation);
      assertEquals(merged, EngineStats.mergedRows(), "counted as merged on the device");
      assertSameAsCpu(keys, permutation, "merge failed, sorted");
      cuda.sortRuns(keys, runStarts, permutation);
      assertEquals(merged + n, EngineStats.mergedRows(), "the next merge ran on the device");
      assertSameAsCpu(keys, permutation, "merged");
    }
  }

  /**
   * A gather that fails on the device, before or as its copies back start, declines (no other
   * task holds memory to wait for): the pages hold what they held, with or without pages sent
   * ahead, and the rows then go out through the permutation.
   */
  @ParameterizedTest
  @EnumSource(value = Phase.class, names = {"GATHER", "DOWNLOAD"})
  void aGatherThatFailsDeclinesWithThePagesUnchanged(Phase phase) {
    for (boolean sentAhead : new boolean[] {false, true}) {
      SplittableRandom random = new SplittableRandom(SEED + 4);
      try (RandomRecords records = new RandomRecords(HostBuffer::acquireTransferable);
          RowUpload upload = sentAhead ? cuda.openRowUpload() : null) {
        RowPages rows = records.write(random, 300_000, 8, 160, 1L << 20,
            sentAhead ? upload::add : null);
        HostBuffer permutation = records.shuffle(random);
        byte[][] before = pages(rows);
        long injected = DeviceFaults.injected(phase);
        DeviceFaults.failNext(phase, 1);
        String what = phase + (sentAhead ? ", pages sent ahead" : "");
        assertNull(cuda.gatherRows(rows, permutation, upload), what + ": no decline");
        assertEquals(injected + 1, DeviceFaults.injected(phase), what);
        byte[][] after = pages(rows);
        for (int k = 0; k < before.length; k++) {
          assertArrayEquals(before[k], after[k], what + ": page " + k + " changed");
        }
      }
    }
  }

  /** Sending pages ahead fails: the upload stops, and the gather sends every page itself. */
  @Test
  void anUploadAheadThatFailsLeavesTheGatherToSendThePages() {
    SplittableRandom random = new SplittableRandom(SEED + 6);
    try (RandomRecords records = new RandomRecords(HostBuffer::acquireTransferable);
        RowUpload upload = cuda.openRowUpload()) {
      long injected = DeviceFaults.injected(Phase.UPLOAD);
      DeviceFaults.failNext(Phase.UPLOAD, 1);
      RowPages rows = records.write(random, 300_000, 8, 160, 1L << 20, upload::add);
      assertEquals(injected + 1, DeviceFaults.injected(Phase.UPLOAD), "no page was sent ahead");
      HostBuffer permutation = records.shuffle(random);
      byte[] expected = records.expectedStream();
      try (RowArrival arrival = cuda.gatherRows(rows, permutation, upload)) {
        assertNotNull(arrival, "the gather declined");
        assertArrayEquals(expected, records.readStream(arrival), "seed " + SEED);
      }
    }
  }

  /**
   * Another task holds device memory (its rows sent ahead) and gives it back a moment later: a
   * gather that failed meanwhile waits for it and runs; the rows stream back in order.
   */
  @Test
  void aGatherWaitsForMemoryAnotherTaskGivesBack() throws Exception {
    SplittableRandom random = new SplittableRandom(SEED + 5);
    try (RandomRecords other = new RandomRecords(HostBuffer::acquireTransferable);
        RandomRecords records = new RandomRecords(HostBuffer::acquireTransferable)) {
      RowUpload held = cuda.openRowUpload();
      other.write(random, 100_000, 8, 160, 1L << 20, held::add);
      assertTrue(cuda.deviceBytesInUse() > 0, "the other task holds no device memory");
      RowPages rows = records.write(random, 300_000, 8, 160, 1L << 20, null);
      HostBuffer permutation = records.shuffle(random);
      byte[] expected = records.expectedStream();
      Thread giveBack = new Thread(() -> {
        try {
          Thread.sleep(300);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        held.close();
      });
      long retries = EngineStats.deviceRetries();
      DeviceFaults.failNext(Phase.GATHER, 1);
      giveBack.start();
      try (RowArrival arrival = cuda.gatherRows(rows, permutation, null)) {
        assertNotNull(arrival, "the gather declined instead of waiting");
        assertArrayEquals(expected, records.readStream(arrival), "seed " + SEED);
      } finally {
        giveBack.join();
        held.close();
      }
      assertEquals(retries + 1, EngineStats.deviceRetries());
    }
  }

  private static byte[][] pages(RowPages rows) {
    byte[][] copy = new byte[rows.numPages()][];
    for (int k = 0; k < copy.length; k++) {
      copy[k] = new byte[(int) rows.usedBytes(k)];
      HostMemory.copy(null, rows.page(k).address(), copy[k], HostMemory.BYTE_ARRAY_OFFSET,
          copy[k].length);
    }
    return copy;
  }

  private static void sortAndCompare(int n, int keyBits, long seed, String what) {
    try (HostBuffer words = HostBuffer.acquireTransferable(8L * n * ((keyBits + 63) / 64));
        HostBuffer permutation = HostBuffer.acquireTransferable(4L * n)) {
      KeyBatch keys = randomKeys(words, n, keyBits, seed);
      cuda.sort(keys, permutation);
      assertSameAsCpu(keys, permutation, what + ", seed " + seed);
    }
  }

  private static KeyBatch randomKeys(HostBuffer words, int n, int keyBits, long seed) {
    int numWords = (keyBits + 63) / 64;
    KeyBatch keys = new KeyBatch(words, n, numWords, keyBits);
    SplittableRandom random = new SplittableRandom(seed);
    int lastBits = keyBits - 64 * (numWords - 1);
    long lastMask = lastBits == 64 ? -1L : -1L << (64 - lastBits);
    for (int r = 0; r < n; r++) {
      for (int w = 0; w < numWords; w++) {
        long word = random.nextLong();
        keys.setWord(r, w, w == numWords - 1 ? word & lastMask : word);
      }
    }
    return keys;
  }

  private static void assertSameAsCpu(KeyBatch keys, HostBuffer gpuPermutation, String what) {
    int n = keys.numRows();
    try (HostBuffer cpu = HostBuffer.allocate(4L * n + 4)) {
      Engines.cpu().sort(keys, cpu);
      int[] expected = new int[n];
      int[] actual = new int[n];
      HostMemory.copyToArray(cpu.address(), expected, 0, n);
      HostMemory.copyToArray(gpuPermutation.address(), actual, 0, n);
      assertArrayEquals(expected, actual, what);
    }
  }
}
