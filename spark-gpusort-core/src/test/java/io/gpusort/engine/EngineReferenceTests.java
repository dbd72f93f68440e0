package io.gpusort.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import io.gpusort.memory.HostBuffer;
import io.gpusort.memory.HostMemory;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The reference suite every {@link SortEngine} passes: random keys of many shapes and sizes,
 * sorted by the engine and checked against a stable sort by {@link Arrays}. An engine's test
 * subclasses this and implements {@link #createEngine()}; GPU subclasses skip themselves with
 * {@code assumeTrue} in that method where no device exists.
 *
 * <p>Every case is seeded from a base seed, the system property {@code gpusort.test.seed} if set
 * and a random one otherwise; each failure message names the base seed, the case's own seed and
 * the case's shape, so {@code -Dgpusort.test.seed=<base>} replays it.
 *
 * <p>After each test the engine is closed and the off-heap bytes in use must be what they were
 * before the engine was created.
 */
public abstract class EngineReferenceTests {
  /** Sizes around the digit radix, the parallel threshold and powers of two. */
  private static final int[] SMALL_SIZES = {
      0, 1, 2, 3, 7, 255, 256, 257, 4095, 4096, 4097, 65535, 65536, 65537};
  /** The small sizes from here on are rotated among the shapes on a {@link #slowDevice()}. */
  private static final int ROTATED_SIZE = 65535;
  private static final KeyShape[] SHAPES = {
      new KeyShape(1, 64), new KeyShape(1, 40), new KeyShape(1, 13), new KeyShape(1, 0),
      new KeyShape(2, 128), new KeyShape(2, 100), new KeyShape(2, 64), new KeyShape(2, 40),
      new KeyShape(3, 192), new KeyShape(3, 150), new KeyShape(3, 72)};
  /** Bytes after the permutation that the engine must leave alone. */
  private static final int GUARD_BYTES = 64;
  private static final byte GUARD_VALUE = (byte) 0xA5;
  private static final long BASE_SEED = baseSeed();
  private static final long HIGH_HALF = 0xFFFF_FFFF_0000_0000L;

  private SortEngine engine;
  private long bytesInUseBefore;

  /** A new engine for one test; closed by the suite after the test. */
  protected abstract SortEngine createEngine();

  /**
   * The host memory keys and permutations live in: plain off-heap memory unless a subclass
   * chooses otherwise (a GPU engine's suite also runs on page-locked buffers).
   */
  protected HostBuffer allocateHostBuffer(long sizeBytes) {
    return HostBuffer.allocate(sizeBytes);
  }

  @BeforeEach
  void createEngineForTest() {
    Engines.awaitWarmups();
    bytesInUseBefore = HostMemory.bytesInUse();
    engine = createEngine();
  }

  @AfterEach
  void closeEngineAndCheckLeaks() {
    if (engine != null) {
      engine.close();
      engine = null;
    }
    assertEquals(bytesInUseBefore, HostMemory.bytesInUse(),
        "off-heap bytes in use changed over the test (leak)" + seedText());
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(InputKind.class)
  void smallSizesEveryShape(InputKind kind) {
    for (int s = 0; s < SHAPES.length; s++) {
      for (int numRows : SMALL_SIZES) {
        // On a device the CPU emulates, the 64 Ki sizes take a third of the shapes for each kind
        // of input, turn by turn: every shape still meets them, under 3 of the 9 kinds.
        if (numRows >= ROTATED_SIZE && slowDevice() && (s + kind.ordinal()) % 3 != 0) {
          continue;
        }
        checkSort(kind, numRows, SHAPES[s]);
      }
    }
  }

  /**
   * Whether the engine's device is a CPU emulating one (lavapipe in CI), where the small sizes'
   * largest take most of a run: a third of their shape and input pairs then. The GPU host and
   * the CPU engine run every pair.
   */
  protected boolean slowDevice() {
    return false;
  }

  static Stream<Arguments> largeCases() {
    return Stream.of(
        Arguments.of(InputKind.RANDOM, 4_000_000, new KeyShape(1, 64)),
        Arguments.of(InputKind.RANDOM, 2_000_000, new KeyShape(1, 40)),
        Arguments.of(InputKind.RANDOM_BIT_MASK, 4_000_000, new KeyShape(1, 64)),
        Arguments.of(InputKind.SMALL_RANGE, 2_000_000, new KeyShape(1, 64)),
        Arguments.of(InputKind.FEW_DISTINCT, 2_000_000, new KeyShape(2, 128)),
        Arguments.of(InputKind.REVERSE_SORTED, 1_000_003, new KeyShape(2, 100)),
        Arguments.of(InputKind.RANDOM_BIT_MASK, 1_000_000, new KeyShape(3, 192)),
        Arguments.of(InputKind.EXTREMES, 300_001, new KeyShape(3, 150)));
  }

  @ParameterizedTest(name = "{0} n={1} {2}")
  @MethodSource("largeCases")
  void largeSizes(InputKind kind, int numRows, KeyShape shape) {
    checkSort(kind, numRows, shape);
  }

  /** Signed/unsigned mistakes show here first: the order is 0, 1, MAX, MIN, -2, -1. */
  @Test
  void extremesSortUnsigned() {
    long[] values = {-1L, 0L, Long.MIN_VALUE, Long.MAX_VALUE, 1L, -2L, 0L, -1L};
    int[] expected = {1, 6, 4, 3, 2, 5, 0, 7};
    int[] actual = sortWithEngine(new long[][] {values}, 64);
    assertEquals(Arrays.toString(expected), Arrays.toString(actual), "engine " + engine.name());
  }

  /** Word 0 decides before word 1, whatever word 1 holds. */
  @Test
  void mostSignificantWordFirst() {
    long[] word0 = {1L, 0L, 1L, 0L, -1L};
    long[] word1 = {0L, -1L, Long.MIN_VALUE, 5L, 0L};
    int[] expected = {3, 1, 0, 2, 4};
    int[] actual = sortWithEngine(new long[][] {word0, word1}, 128);
    assertEquals(Arrays.toString(expected), Arrays.toString(actual), "engine " + engine.name());
  }

  /** Sorting many batches on one engine instance gives each its own right answer. */
  @Test
  void oneEngineManyBatches() {
    for (int i = 0; i < 6; i++) {
      checkSort(InputKind.values()[i], i % 2 == 0 ? 70_000 + i : 300 + i, SHAPES[i]);
    }
  }

  /** Row counts, record sizes (bytes of row, multiples of 8) and page sizes of the gather cases. */
  static Stream<Arguments> gatherCases() {
    return Stream.of(
        Arguments.of(0, 8, 8, 4096),
        Arguments.of(1, 24, 24, 4096),
        Arguments.of(2, 8, 64, 4096),
        Arguments.of(1023, 32, 32, 4096),
        Arguments.of(1025, 0, 120, 4096),
        Arguments.of(4097, 8, 256, 1000),
        Arguments.of(70_001, 16, 16, 64 << 10),
        Arguments.of(300_001, 8, 504, 1 << 20),
        Arguments.of(1_000_000, 32, 32, 8 << 20));
  }

  /**
   * {@link SortEngine#gatherRows} against the same records read through the permutation: pages
   * of one size (with room left at their ends, so that records of the sorted stream continue into
   * the next page), records of one size or of many, one random permutation.
   */
  @ParameterizedTest(name = "n={0} rows of {1}..{2} bytes, pages of {3}")
  @MethodSource("gatherCases")
  void gatherRowsPutsRecordsInPermutationOrder(int numRows, int minRowBytes, int maxRowBytes,
      int pageBytes) {
    checkGather(numRows, minRowBytes, maxRowBytes, pageBytes, false);
  }

  /**
   * The same through the streaming call: every page but the last sent ahead where the engine has
   * a device ({@link SortEngine#openRowUpload}), then the sorted stream read page by page, each
   * only after {@link RowArrival#await} says it is back.
   */
  @ParameterizedTest(name = "n={0} rows of {1}..{2} bytes, pages of {3}")
  @MethodSource("gatherCases")
  void gatherRowsSentAheadAndReadAsTheyArrive(int numRows, int minRowBytes, int maxRowBytes,
      int pageBytes) {
    checkGather(numRows, minRowBytes, maxRowBytes, pageBytes, true);
  }

  private void checkGather(int numRows, int minRowBytes, int maxRowBytes, int pageBytes,
      boolean streaming) {
    SplittableRandom random = new SplittableRandom(mix(BASE_SEED ^ numRows ^ (long) pageBytes << 20));
    String context = "engine=" + engine.name() + " n=" + numRows + " rows " + minRowBytes + ".."
        + maxRowBytes + " pages " + pageBytes + (streaming ? " streaming" : "") + seedText();
    try (RandomRecords records = new RandomRecords(this::allocateHostBuffer)) {
      RowPages rows = records.write(random, numRows, minRowBytes, maxRowBytes, pageBytes, null);
      HostBuffer permutation = records.shuffle(random);
      byte[] expected = records.expectedStream();
      RowArrival arrival = streaming ? gatherStreaming(rows, permutation) : null;
      if (streaming ? arrival == null : !engine.gatherRows(rows, permutation)) {
        fail("the engine declined to gather " + rows.recordBytes() + " bytes; " + context);
      }
      byte[] actual;
      try (arrival) {
        actual = records.readStream(arrival);
      }
      int mismatch = Arrays.mismatch(expected, actual);
      assertEquals(-1, mismatch, "sorted stream differs from byte " + mismatch + "; " + context);
    }
  }

  /** Sends every page but the last ahead (where the engine can), then gathers. */
  private RowArrival gatherStreaming(RowPages rows, HostBuffer permutation) {
    try (RowUpload upload = engine.openRowUpload()) {
      if (upload != null) {
        for (int k = 0; k + 1 < rows.numPages(); k++) {
          upload.add(rows.page(k), rows.usedBytes(k));
        }
      }
      return engine.gatherRows(rows, permutation, upload);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // One case: generate, sort, check.

  /** Sorts one generated case with the engine and checks it against the reference. */
  protected final void checkSort(InputKind kind, int numRows, KeyShape shape) {
    long caseSeed = caseSeed(kind, numRows, shape);
    String context = "engine=" + engine.name() + " kind=" + kind + " numRows=" + numRows
        + " numWords=" + shape.numWords() + " keyBits=" + shape.keyBits()
        + " caseSeed=0x" + Long.toHexString(caseSeed) + seedText();
    long[][] columns = generate(kind, numRows, shape, new SplittableRandom(caseSeed));
    int[] permutation;
    try {
      permutation = sortWithEngine(columns, shape.keyBits());
    } catch (RuntimeException e) {
      throw new AssertionError("sort threw: " + context, e);
    }
    checkPermutation(columns, permutation, context);
    checkOrderAndStability(columns, permutation, context);
    checkEqualsReference(columns, permutation, context);
  }

  /** Copies {@code columns} off-heap, sorts them, and returns the permutation the engine wrote. */
  protected final int[] sortWithEngine(long[][] columns, int keyBits) {
    int numWords = columns.length;
    int numRows = columns[0].length;
    try (HostBuffer words = allocateHostBuffer(KeyBatch.requiredBytes(numRows, numWords));
        HostBuffer out = allocateHostBuffer(4L * numRows + GUARD_BYTES)) {
      KeyBatch keys = new KeyBatch(words, numRows, numWords, keyBits);
      for (int w = 0; w < numWords; w++) {
        HostMemory.copyFromArray(columns[w], 0, words.address() + keys.columnOffset(w), numRows);
      }
      HostMemory.fill(out.address(), out.sizeBytes(), GUARD_VALUE);
      engine.sort(keys, out);
      checkGuard(out, 4L * numRows);
      int[] permutation = new int[numRows];
      HostMemory.copyToArray(out.address(), permutation, 0, numRows);
      return permutation;
    }
  }

  private void checkGuard(HostBuffer out, long permutationBytes) {
    int guardInt = GUARD_VALUE & 0xFF;
    guardInt |= guardInt << 8;
    guardInt |= guardInt << 16;
    for (long offset = permutationBytes; offset < out.sizeBytes(); offset += 4) {
      if (out.getInt(offset) != guardInt) {
        fail("engine " + engine.name() + " wrote past the permutation of " + permutationBytes
            + " bytes, at byte " + offset + seedText());
      }
    }
  }

  private static void checkPermutation(long[][] columns, int[] permutation, String context) {
    int numRows = columns[0].length;
    boolean[] seen = new boolean[numRows];
    for (int i = 0; i < numRows; i++) {
      int row = permutation[i];
      if (row < 0 || row >= numRows) {
        fail("position " + i + " holds row " + row + ", out of range: " + context);
      }
      if (seen[row]) {
        fail("row " + row + " appears twice (again at position " + i + "): " + context);
      }
      seen[row] = true;
    }
  }

  private static void checkOrderAndStability(long[][] columns, int[] permutation, String context) {
    for (int i = 1; i < permutation.length; i++) {
      int previous = permutation[i - 1];
      int current = permutation[i];
      int order = compareRows(columns, previous, current);
      if (order > 0) {
        fail("keys decrease at position " + i + ": row " + previous + " " + keyText(columns, previous)
            + " before row " + current + " " + keyText(columns, current) + ": " + context);
      }
      if (order == 0 && previous > current) {
        fail("not stable at position " + i + ": equal keys " + keyText(columns, current)
            + " of rows " + previous + " before " + current + ": " + context);
      }
    }
  }

  private static void checkEqualsReference(long[][] columns, int[] permutation, String context) {
    int[] expected = referencePermutation(columns);
    for (int i = 0; i < expected.length; i++) {
      if (expected[i] != permutation[i]) {
        fail("differs from the reference first at position " + i + ": row " + permutation[i]
            + " " + keyText(columns, permutation[i]) + " where the reference has row "
            + expected[i] + " " + keyText(columns, expected[i]) + ": " + context);
      }
    }
  }

  /**
   * The stable sort by {@link Arrays#sort(long[], int, int)}, built differently from a radix sort:
   * most significant 32-bit half-word first, each group of rows whose key halves so far are all
   * equal is sorted on (next half, row) packed into one long and then split where that half
   * changes. A half goes in the high 32 bits with its top bit flipped, so that signed order of the
   * packed longs is unsigned order of the halves; the row index in the low bits breaks ties, which
   * makes the result stable. The order and stability checks, done separately with a comparator on
   * the unsigned words, cross-check this.
   */
  static int[] referencePermutation(long[][] columns) {
    int numRows = columns[0].length;
    int[] rows = new int[numRows];
    for (int i = 0; i < numRows; i++) {
      rows[i] = i;
    }
    boolean[] groupStart = new boolean[numRows + 1];
    groupStart[0] = true;
    groupStart[numRows] = true;
    long[] packed = new long[numRows];
    for (int half = 0; half < 2 * columns.length; half++) {
      long[] column = columns[half / 2];
      int shift = half % 2 == 0 ? 0 : 32;
      for (int i = 0; i < numRows; i++) {
        packed[i] = (((column[rows[i]] << shift) ^ Long.MIN_VALUE) & HIGH_HALF) | rows[i];
      }
      int start = 0;
      for (int end = 1; end <= numRows; end++) {
        if (groupStart[end]) {
          Arrays.sort(packed, start, end);
          start = end;
        }
      }
      for (int i = 0; i < numRows; i++) {
        rows[i] = (int) packed[i];
        if (i > 0 && (packed[i] & HIGH_HALF) != (packed[i - 1] & HIGH_HALF)) {
          groupStart[i] = true;
        }
      }
    }
    return rows;
  }

  static int compareRows(long[][] columns, int a, int b) {
    for (long[] column : columns) {
      int order = Long.compareUnsigned(column[a], column[b]);
      if (order != 0) {
        return order;
      }
    }
    return 0;
  }

  private static String keyText(long[][] columns, int row) {
    StringBuilder text = new StringBuilder("[");
    for (int w = 0; w < columns.length; w++) {
      text.append(w == 0 ? "" : " ").append(String.format("%016x", columns[w][row]));
    }
    return text.append(']').toString();
  }

  // ---------------------------------------------------------------------------------------------
  // Inputs.

  /** A key layout: {@code numWords} words of which the first {@code keyBits} bits count. */
  public record KeyShape(int numWords, int keyBits) {
    /** Key bits held by word {@code w}: they are its high bits, the rest are zero. */
    int significantBits(int w) {
      return Math.max(0, Math.min(64, keyBits - 64 * w));
    }

    @Override
    public String toString() {
      return numWords + "x64/" + keyBits + "bits";
    }
  }

  /** How the words of a case are drawn. */
  public enum InputKind {
    /** Every word uniform. */
    RANDOM,
    /** Every word uniform ANDed with a per-word random mask: many digits are constant. */
    RANDOM_BIT_MASK,
    /** Every word in 0..1000. */
    SMALL_RANGE,
    /** One to eight distinct keys, repeated: long runs of equal keys test stability. */
    FEW_DISTINCT,
    /** Ascending, drawn from about numRows / 4 distinct keys. */
    SORTED,
    /** Descending, drawn from about numRows / 4 distinct keys. */
    REVERSE_SORTED,
    /** One random key for every row. */
    ALL_EQUAL,
    /** Every word zero. */
    ALL_ZERO,
    /** Every word one of 0, 1, -2, -1, MIN_VALUE, MAX_VALUE, MIN_VALUE + 1, MAX_VALUE - 1. */
    EXTREMES
  }

  private static final long[] EXTREME_WORDS = {
      0L, 1L, -2L, -1L, Long.MIN_VALUE, Long.MAX_VALUE, Long.MIN_VALUE + 1, Long.MAX_VALUE - 1};

  /**
   * Column-major words of {@code numRows} keys: {@code result[w][row]}. Each drawn word value is
   * moved into the word's significant bits (its low bits shifted up), so that the bits after
   * {@code keyBits} are zero as {@link KeyBatch} requires.
   */
  static long[][] generate(InputKind kind, int numRows, KeyShape shape, SplittableRandom random) {
    int numWords = shape.numWords();
    long[][] columns = new long[numWords][numRows];
    switch (kind) {
      case RANDOM -> fillEach(columns, (w, r) -> random.nextLong());
      case RANDOM_BIT_MASK -> {
        long[] masks = new long[numWords];
        for (int w = 0; w < numWords; w++) {
          masks[w] = random.nextLong() & random.nextLong() & (random.nextBoolean() ? -1L : random.nextLong());
        }
        fillEach(columns, (w, r) -> random.nextLong() & masks[w]);
      }
      case SMALL_RANGE -> fillEach(columns, (w, r) -> random.nextInt(1001));
      case FEW_DISTINCT -> fillFromPool(columns, 1 + random.nextInt(8), random);
      case SORTED, REVERSE_SORTED -> fillFromPool(columns, Math.max(1, numRows / 4), random);
      case ALL_EQUAL -> fillFromPool(columns, 1, random);
      case ALL_ZERO -> fillEach(columns, (w, r) -> 0L);
      case EXTREMES -> fillEach(columns, (w, r) -> EXTREME_WORDS[random.nextInt(EXTREME_WORDS.length)]);
      default -> throw new AssertionError(kind);
    }
    alignToKeyBits(columns, shape);
    if (kind == InputKind.SORTED || kind == InputKind.REVERSE_SORTED) {
      orderRows(columns, kind == InputKind.REVERSE_SORTED);
    }
    return columns;
  }

  @FunctionalInterface
  private interface WordSource {
    long next(int word, int row);
  }

  private static void fillEach(long[][] columns, WordSource source) {
    for (int r = 0; r < columns[0].length; r++) {
      for (int w = 0; w < columns.length; w++) {
        columns[w][r] = source.next(w, r);
      }
    }
  }

  /** Fills every row with one of {@code poolSize} random keys. */
  private static void fillFromPool(long[][] columns, int poolSize, SplittableRandom random) {
    long[][] pool = new long[columns.length][poolSize];
    fillEach(pool, (w, r) -> random.nextLong());
    for (int r = 0; r < columns[0].length; r++) {
      int pick = random.nextInt(poolSize);
      for (int w = 0; w < columns.length; w++) {
        columns[w][r] = pool[w][pick];
      }
    }
  }

  private static void alignToKeyBits(long[][] columns, KeyShape shape) {
    for (int w = 0; w < columns.length; w++) {
      int bits = shape.significantBits(w);
      for (int r = 0; r < columns[w].length; r++) {
        columns[w][r] = bits == 0 ? 0L : columns[w][r] << (64 - bits);
      }
    }
  }

  private static void orderRows(long[][] columns, boolean descending) {
    int[] order = referencePermutation(columns);
    long[][] copy = new long[columns.length][];
    for (int w = 0; w < columns.length; w++) {
      copy[w] = columns[w].clone();
    }
    int numRows = order.length;
    for (int i = 0; i < numRows; i++) {
      int source = order[descending ? numRows - 1 - i : i];
      for (int w = 0; w < columns.length; w++) {
        columns[w][i] = copy[w][source];
      }
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Seeds.

  private static long baseSeed() {
    String property = System.getProperty("gpusort.test.seed");
    if (property != null && !property.isBlank()) {
      return Long.decode(property.trim());
    }
    return new SplittableRandom().nextLong();
  }

  private static long caseSeed(InputKind kind, int numRows, KeyShape shape) {
    long seed = BASE_SEED;
    for (long part : List.of((long) kind.ordinal(), (long) numRows, (long) shape.numWords(),
        (long) shape.keyBits())) {
      seed = mix(seed ^ part);
    }
    return seed;
  }

  /** The SplitMix64 finaliser: neighbouring inputs give unrelated seeds. */
  private static long mix(long z) {
    z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
    z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
    return z ^ (z >>> 31);
  }

  private static String seedText() {
    return " (base seed " + BASE_SEED + "; rerun with -Dgpusort.test.seed=" + BASE_SEED + ")";
  }
}
