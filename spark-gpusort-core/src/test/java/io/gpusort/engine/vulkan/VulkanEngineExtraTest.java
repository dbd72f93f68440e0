package io.gpusort.engine.vulkan;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gpusort.config.GpuSortConf.Algorithm;
import io.gpusort.config.GpuSortConf.EngineChoice;
import io.gpusort.engine.EngineOptions;
import io.gpusort.engine.KeyBatch;
import io.gpusort.memory.HostBuffer;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The Vulkan engine beyond the reference suite: a batch larger than one device piece (sorted in
 * pieces, merged on the host) and the keys-only sort of the benchmark, on the test device
 * (lavapipe in CI).
 */
@Tag("vulkan")
class VulkanEngineExtraTest {
  private static final long SEED = 0x5eedL;

  @ParameterizedTest
  @EnumSource(value = Algorithm.class, names = {"RADIX", "ODDEVEN"})
  void batchLargerThanAPieceIsSortedInPiecesAndMerged(Algorithm algorithm) {
    assumeTrue(Vulkan.available() && Vulkan.choose(-1, true).isPresent(), "no Vulkan device");
    // A budget of one byte leaves pieces of the smallest size the engine uses, 65536 rows.
    EngineOptions options = EngineOptions.defaults(EngineChoice.VULKAN).withAlgorithm(algorithm)
        .withVulkanDevice(-1, true).withDeviceMemoryBudget(1);
    int n = 200_003;
    try (VulkanEngine engine = new VulkanEngine(options);
        HostBuffer words = HostBuffer.allocate(8L * n * 2);
        HostBuffer perm = HostBuffer.allocate(4L * n)) {
      KeyBatch keys = new KeyBatch(words, n, 2, 100);
      assertTrue(engine.rowsPerPiece(keys) < n, "the batch must need several pieces");
      SplittableRandom random = new SplittableRandom(SEED);
      for (int r = 0; r < n; r++) {
        // Few distinct first words: long runs of equal keys across pieces test stability.
        keys.setWord(r, 0, random.nextInt(7) * 0x0123_4567_89ab_cdefL);
        keys.setWord(r, 1, (random.nextLong() >>> 28) << 28);
      }
      engine.sort(keys, perm);
      int[] actual = new int[n];
      for (int i = 0; i < n; i++) {
        actual[i] = perm.getInt(4L * i);
      }
      Integer[] expected = new Integer[n];
      for (int i = 0; i < n; i++) {
        expected[i] = i;
      }
      // Arrays.sort on objects is stable: equal keys keep ascending rows.
      Arrays.sort(expected, (a, b) -> {
        int c = Long.compareUnsigned(keys.word(a, 0), keys.word(b, 0));
        return c != 0 ? c : Long.compareUnsigned(keys.word(a, 1), keys.word(b, 1));
      });
      assertArrayEquals(Arrays.stream(expected).mapToInt(Integer::intValue).toArray(), actual,
          "seed " + SEED);
      assertEquals(0, engine.deviceBytesInUse());
    }
  }

  @ParameterizedTest
  @EnumSource(value = Algorithm.class, names = {"RADIX"})
  void keysOnlySortGivesTheSortedKeys(Algorithm algorithm) {
    assumeTrue(Vulkan.available() && Vulkan.choose(-1, true).isPresent(), "no Vulkan device");
    int n = 100_001;
    try (VulkanEngine engine = new VulkanEngine(EngineOptions.defaults(EngineChoice.VULKAN)
            .withAlgorithm(algorithm).withVulkanDevice(-1, true));
        HostBuffer words = HostBuffer.allocate(8L * n);
        HostBuffer sorted = HostBuffer.allocate(4L * n)) {
      KeyBatch keys = new KeyBatch(words, n, 1, 32);
      SplittableRandom random = new SplittableRandom(SEED);
      long[] expected = new long[n];
      for (int r = 0; r < n; r++) {
        int key = random.nextInt(1 << 20) * 4093;
        keys.setWord(r, 0, ((long) key) << 32);
        expected[r] = Integer.toUnsignedLong(key);
      }
      engine.sortKeysOnly(keys, sorted);
      Arrays.sort(expected);
      for (int i = 0; i < n; i++) {
        assertEquals(expected[i], Integer.toUnsignedLong(sorted.getInt(4L * i)), "key " + i);
      }
      KeyBatch wide = new KeyBatch(words, n / 2, 2, 128);
      assertThrows(IllegalArgumentException.class, () -> engine.sortKeysOnly(wide, sorted));
    }
  }
}
