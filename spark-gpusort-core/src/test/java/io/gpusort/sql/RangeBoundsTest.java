package io.gpusort.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.gpusort.TestSeeds;
import io.gpusort.compat.ScalaCollections;
import io.gpusort.config.GpuSortConf;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.function.Function;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Checks {@link RangeBounds} on real {@link UnsafeRow}s, for a long key (an exact layout) and a
 * string key with a 4-byte prefix (a layout that needs exact tie-breaking): sampling 4 input
 * partitions of 10,000 rows and choosing 8 output partitions must balance all-equal keys and a
 * heavy key thanks to the (partition, index) tie-breaker, must route rows in sorted order to
 * non-decreasing partitions, and must give one partition for an empty input.
 *
 * <p>Seeded from {@code gpusort.test.seed} when set, randomly otherwise; failures name the seed.
 */
class RangeBoundsTest {
  private static final long SEED = TestSeeds.baseSeed();
  private static final int INPUT_PARTITIONS = 4;
  private static final int ROWS_PER_PARTITION = 10_000;
  private static final int OUTPUT_PARTITIONS = 8;
  private static final int STRING_PREFIX_BYTES = 4;
  private static final String SHARED_PREFIX = "same-prefix/";

  /** The key column's type, and how a key of the test's choosing becomes a Spark value. */
  enum KeyType {
    LONG(DataTypes.LongType, k -> k),
    STRING(DataTypes.StringType, k -> UTF8String.fromString(SHARED_PREFIX + k)),
    /**
     * Binaries of one length within the prefix, as TeraSort's keys (10 bytes) within the default
     * prefix: the layout truncates binaries, but such values are exact even where they end in a
     * zero byte.
     */
    FIXED_BINARY(DataTypes.BinaryType, k -> java.nio.ByteBuffer.allocate(STRING_PREFIX_BYTES)
        .putInt(k.intValue()).array());

    final DataType type;
    final Function<Long, Object> value;

    KeyType(DataType type, Function<Long, Object> value) {
      this.type = type;
      this.value = value;
    }
  }

  /** A sort on one key column, with everything RangeBounds needs. */
  private static final class Fixture {
    final RowKeys keys;
    final UnsafeProjection toUnsafe;
    final boolean exact;

    Fixture(KeyType keyType) {
      AttributeReference key = RowKeyEncoderTest.attribute("k", keyType.type, true);
      AttributeReference payload = RowKeyEncoderTest.attribute("v", DataTypes.IntegerType, false);
      StructType schema = new StructType(new StructField[] {
          new StructField("k", keyType.type, true, Metadata.empty()),
          new StructField("v", DataTypes.IntegerType, false, Metadata.empty())});
      KeySpec spec = KeySpec.of(List.of(RowKeyEncoderTest.sortOrder(key, false, true)),
          ScalaCollections.list(List.<Attribute>of(key, payload)),
          STRING_PREFIX_BYTES);
      SortPlan plan = new SortPlan(spec, schema, GpuSortConf.of(Map.of()), OUTPUT_PARTITIONS,
          64L << 20);
      this.keys = new RowKeys(plan);
      this.toUnsafe = UnsafeProjection.create(schema);
      this.exact = spec.layout.needsTieBreak();
    }

    UnsafeRow row(KeyType keyType, Long key, int payload) {
      Object value = key == null ? null : keyType.value.apply(key);
      return toUnsafe.apply(new GenericInternalRow(new Object[] {value, payload})).copy();
    }

    /** Samples every input partition and chooses bounds, as the driver would. */
    RangeBounds bounds(List<List<UnsafeRow>> input, int numPartitions) {
      int sampleRowsPerPartition = (int) Math.ceil(3.0
          * GpuSortConf.SAMPLE_ROWS_PER_PARTITION.defaultValue() * numPartitions / input.size());
      List<RangeBounds.PartitionSample> samples = new ArrayList<>();
      for (int p = 0; p < input.size(); p++) {
        samples.add(RangeBounds.sample(iterator(input.get(p)), p, sampleRowsPerPartition, keys,
            null));
      }
      return RangeBounds.choose(samples, numPartitions, exact, keys.ordering);
    }

    int partitionOf(RangeBounds bounds, UnsafeRow row, int partition, long index) {
      long[] words = new long[keys.numWords];
      keys.encoder.encode(row, words);
      return bounds.partitionOf(words, row, partition, index, keys.ordering);
    }

    /** Rows per output partition. */
    long[] counts(RangeBounds bounds, List<List<UnsafeRow>> input) {
      long[] counts = new long[bounds.numPartitions()];
      for (int p = 0; p < input.size(); p++) {
        for (int i = 0; i < input.get(p).size(); i++) {
          counts[partitionOf(bounds, input.get(p).get(i), p, i)]++;
        }
      }
      return counts;
    }
  }

  @ParameterizedTest
  @EnumSource(KeyType.class)
  void allEqualKeysAreSpreadByTheTieBreaker(KeyType keyType) {
    Fixture fixture = new Fixture(keyType);
    List<List<UnsafeRow>> input = input(fixture, keyType, (random, p, i) -> 7L);
    RangeBounds bounds = fixture.bounds(input, OUTPUT_PARTITIONS);
    assertEquals(OUTPUT_PARTITIONS, bounds.numPartitions());
    long total = (long) INPUT_PARTITIONS * ROWS_PER_PARTITION;
    long[] counts = fixture.counts(bounds, input);
    for (long c : counts) {
      if (c < total * 5 / 100 || c > total * 25 / 100) {
        fail(keyType + ": rows per output partition " + Arrays.toString(counts)
            + ", each should hold 5% to 25% of " + total + TestSeeds.rerunHint(SEED));
      }
    }
  }

  @ParameterizedTest
  @EnumSource(KeyType.class)
  void aHeavyKeyIsSplitAcrossPartitions(KeyType keyType) {
    Fixture fixture = new Fixture(keyType);
    List<List<UnsafeRow>> input = input(fixture, keyType,
        (random, p, i) -> random.nextInt(10) < 6 ? 1_000_000L : random.nextLong(2_000_000L));
    RangeBounds bounds = fixture.bounds(input, OUTPUT_PARTITIONS);
    long total = (long) INPUT_PARTITIONS * ROWS_PER_PARTITION;
    long fairShare = total / OUTPUT_PARTITIONS;
    long[] counts = fixture.counts(bounds, input);
    assertEquals(total, Arrays.stream(counts).sum());
    for (long c : counts) {
      if (c > 2 * fairShare) {
        fail(keyType + ": rows per output partition " + Arrays.toString(counts)
            + ", none should hold more than twice the fair share " + fairShare + TestSeeds.rerunHint(SEED));
      }
    }
  }

  @ParameterizedTest
  @EnumSource(KeyType.class)
  void rowsInSortedOrderGoToNonDecreasingPartitions(KeyType keyType) {
    Fixture fixture = new Fixture(keyType);
    List<List<UnsafeRow>> input = input(fixture, keyType, FEW_KEYS);
    RangeBounds bounds = fixture.bounds(input, OUTPUT_PARTITIONS);
    List<long[]> positions = new ArrayList<>();
    for (int p = 0; p < input.size(); p++) {
      for (int i = 0; i < input.get(p).size(); i++) {
        positions.add(new long[] {p, i});
      }
    }
    Comparator<long[]> sparkOrder = (a, b) -> {
      int c = fixture.keys.ordering.compare(input.get((int) a[0]).get((int) a[1]),
          input.get((int) b[0]).get((int) b[1]));
      if (c != 0) {
        return c;
      }
      c = Long.compare(a[0], b[0]);
      return c != 0 ? c : Long.compare(a[1], b[1]);
    };
    positions.sort(sparkOrder);
    long[] words = new long[fixture.keys.numWords];
    int previous = 0;
    int walked = 0;
    for (long[] pos : positions) {
      UnsafeRow row = input.get((int) pos[0]).get((int) pos[1]);
      int partition = fixture.partitionOf(bounds, row, (int) pos[0], pos[1]);
      if (partition < previous) {
        fail(keyType + ": row " + row + " at (" + pos[0] + ", " + pos[1] + ") goes to partition "
            + partition + " after a row that went to " + previous + TestSeeds.rerunHint(SEED));
      }
      // Walked from the last row's partition, a bound at a time, as the map side of the merge
      // mode cuts rows whose keys are truncated.
      fixture.keys.encoder.encode(row, words);
      while (walked < bounds.numBounds()
          && bounds.isAfter(walked, words, row, (int) pos[0], pos[1], fixture.keys.ordering)) {
        walked++;
      }
      assertEquals(partition, walked, "walking the bounds disagrees with partitionOf"
          + TestSeeds.rerunHint(SEED));
      previous = partition;
    }
    assertEquals(OUTPUT_PARTITIONS - 1, previous, "the last row should reach the last partition");
  }

  /**
   * Each input partition sorted on its own (stably, so equal keys keep their order), its positions
   * the tie-breakers: the cuts of one binary search per bound put every position in the partition
   * {@code partitionOf} gives it. Truncated keys are cut only where a partition's keys are all
   * exact, and may be refused where a bound ties with them.
   */
  @ParameterizedTest
  @EnumSource(KeyType.class)
  void cutsOfASortedPartitionPutEachRowInItsPartition(KeyType keyType) {
    Fixture fixture = new Fixture(keyType);
    List<List<UnsafeRow>> input = input(fixture, keyType, FEW_KEYS);
    RangeBounds bounds = fixture.bounds(input, OUTPUT_PARTITIONS);
    int numWords = fixture.keys.numWords;
    int[] counts = new int[OUTPUT_PARTITIONS];
    for (int p = 0; p < input.size(); p++) {
      List<UnsafeRow> rows = new ArrayList<>(input.get(p));
      rows.sort(fixture.keys.ordering::compare);
      long[][] words = new long[rows.size()][numWords];
      fixture.keys.encoder.resetKeysExact();
      for (int k = 0; k < rows.size(); k++) {
        fixture.keys.encoder.encode(rows.get(k), words[k]);
      }
      boolean runExact = fixture.keys.encoder.keysExact();
      RangeBounds.SortedKeys sorted =
          (position, out) -> System.arraycopy(words[position], 0, out, 0, numWords);
      int partition = p;
      if (fixture.keys.exact && !runExact) {
        // The sorter cuts truncated keys by walking their rows; this test has nothing to check.
        continue;
      }
      RowKeyEncoder.KeySpan span = fixture.keys.encoder.span();
      int[] cuts = bounds.cutSorted(rows.size(), partition, sorted, numWords,
          bound -> fixture.keys.encoder.tiesAreEqual(span, bound));
      if (cuts == null) {
        assertTrue(fixture.keys.exact, keyType + ": exact keys always cut");
        continue;
      }
      int b = 0;
      for (int k = 0; k < rows.size(); k++) {
        while (b < cuts.length && k >= cuts[b]) {
          b++;
        }
        assertEquals(fixture.partitionOf(bounds, rows.get(k), p, k), b, keyType + ": position "
            + k + " of input partition " + p + TestSeeds.rerunHint(SEED));
        counts[b]++;
      }
    }
    if (!fixture.keys.exact) {
      for (int c : counts) {
        assertTrue(c > 0, "an output partition with no rows: " + Arrays.toString(counts)
            + TestSeeds.rerunHint(SEED));
      }
    }
  }

  /**
   * Keys as TeraSort's: random bytes of one length, every other one ending in a zero byte. Their layout
   * truncates binaries, yet every partition's keys are exact (one length, within the prefix), so
   * each sorted partition is cut by binary search alone, and the cuts agree with {@code
   * partitionOf} for every row.
   */
  @org.junit.jupiter.api.Test
  void fixedLengthKeysAreCutWithoutReadingTheirRows() {
    Fixture fixture = new Fixture(KeyType.FIXED_BINARY);
    List<List<UnsafeRow>> input = input(fixture, KeyType.FIXED_BINARY,
        (r, p, i) -> r.nextBoolean() ? r.nextLong() << 8 : r.nextLong());
    RangeBounds bounds = fixture.bounds(input, OUTPUT_PARTITIONS);
    int numWords = fixture.keys.numWords;
    assertTrue(fixture.keys.exact, "binary keys are truncated by their layout");
    for (int p = 0; p < input.size(); p++) {
      List<UnsafeRow> rows = new ArrayList<>(input.get(p));
      rows.sort(fixture.keys.ordering::compare);
      long[][] words = new long[rows.size()][numWords];
      fixture.keys.encoder.resetKeysExact();
      for (int k = 0; k < rows.size(); k++) {
        fixture.keys.encoder.encode(rows.get(k), words[k]);
      }
      assertTrue(fixture.keys.encoder.keysExact(), "partition " + p + "'s keys are exact");
      RowKeyEncoder.KeySpan span = fixture.keys.encoder.span();
      int[] cuts = bounds.cutSorted(rows.size(), p,
          (position, out) -> System.arraycopy(words[position], 0, out, 0, numWords), numWords,
          bound -> fixture.keys.encoder.tiesAreEqual(span, bound));
      // Ties with the bounds sampled from this partition's own rows are equal keys: no refusal.
      assertNotNull(cuts, "partition " + p + " cut by binary search" + TestSeeds.rerunHint(SEED));
      int b = 0;
      for (int k = 0; k < rows.size(); k++) {
        while (b < cuts.length && k >= cuts[b]) {
          b++;
        }
        assertEquals(fixture.partitionOf(bounds, rows.get(k), p, k), b, "position " + k
            + " of input partition " + p + TestSeeds.rerunHint(SEED));
      }
    }
  }

  @ParameterizedTest
  @EnumSource(KeyType.class)
  void emptyInputGivesOnePartition(KeyType keyType) {
    Fixture fixture = new Fixture(keyType);
    List<List<UnsafeRow>> input = new ArrayList<>();
    for (int p = 0; p < INPUT_PARTITIONS; p++) {
      input.add(Collections.emptyList());
    }
    for (int requested : new int[] {1, OUTPUT_PARTITIONS}) {
      RangeBounds bounds = fixture.bounds(input, requested);
      assertEquals(1, bounds.numPartitions(), "requested " + requested);
      assertEquals(0, fixture.partitionOf(bounds, fixture.row(keyType, 3L, 0), 0, 0));
      assertEquals(0, fixture.partitionOf(bounds, fixture.row(keyType, null, 0), 2, 5));
    }
    assertEquals(1, RangeBounds.choose(List.of(), OUTPUT_PARTITIONS, fixture.exact,
        fixture.keys.ordering).numPartitions());
  }

  @ParameterizedTest
  @EnumSource(KeyType.class)
  void sampleCountsEveryRowAndKeepsRowsOnlyWhenExact(KeyType keyType) {
    Fixture fixture = new Fixture(keyType);
    assertEquals(keyType != KeyType.LONG, fixture.exact);
    List<List<UnsafeRow>> input = input(fixture, keyType, (random, p, i) -> (long) i);
    RangeBounds.PartitionSample sample =
        RangeBounds.sample(iterator(input.get(1)), 1, 50, fixture.keys, null);
    assertEquals(ROWS_PER_PARTITION, sample.numRows);
    assertEquals(input.get(1).stream().mapToLong(UnsafeRow::getSizeInBytes).sum(),
        sample.numBytes);
    assertEquals(50, sample.points.size());
    long[] seenIndex = sample.points.stream().mapToLong(pt -> pt.index).distinct().toArray();
    assertEquals(50, seenIndex.length, "sampled indices must be distinct");
    for (RangeBounds.Point point : sample.points) {
      assertEquals(1, point.partition);
      assertTrue(point.index >= 0 && point.index < ROWS_PER_PARTITION);
      assertEquals(fixture.exact, point.row != null);
      // The point's key is the key of the row at its index.
      long[] words = new long[point.words.length];
      fixture.keys.encoder.encode(input.get(1).get((int) point.index), words);
      assertTrue(Arrays.equals(words, point.words), "point at index " + point.index);
    }
  }

  /** How the test picks the key of row {@code index} of input partition {@code partition}. */
  private interface KeyChoice {
    Long key(SplittableRandom random, int partition, int index);
  }

  /** Few distinct keys and some nulls, so that the tie-breaker decides most boundaries. */
  private static final KeyChoice FEW_KEYS = (random, p, i) -> random.nextInt(20) == 0 ? null
      : random.nextInt(4) == 0 ? random.nextLong(1L << 40) : (long) random.nextInt(12);

  /**
   * A partition sampled from batches of columns (batches of random sizes, empty ones among them)
   * keeps the very rows, at the same positions, that sampling its rows keeps, and counts them all.
   */
  @org.junit.jupiter.api.Test
  void sampleOfBatchesKeepsTheRowsTheRowsSampleKeeps() {
    Fixture fixture = new Fixture(KeyType.LONG);
    SplittableRandom random = new SplittableRandom(SEED);
    List<List<UnsafeRow>> input = input(fixture, KeyType.LONG, (r, p, i) -> r.nextInt(50) == 0
        ? null : r.nextLong());
    for (int sampleSize : new int[] {1, 50, ROWS_PER_PARTITION + 7}) {
      List<UnsafeRow> rows = input.get(2);
      List<org.apache.spark.sql.vectorized.ColumnarBatch> batches = new ArrayList<>();
      for (int from = 0; from < rows.size(); ) {
        int size = Math.min(rows.size() - from, random.nextInt(5) == 0 ? 0 : random.nextInt(900));
        batches.add(batch(rows.subList(from, from + size)));
        from += size;
      }
      RangeBounds.PartitionSample fromRows =
          RangeBounds.sample(iterator(rows), 2, sampleSize, fixture.keys, null);
      RangeBounds.PartitionSample fromBatches =
          RangeBounds.sampleBatches(batches.iterator(), 2, sampleSize, fixture.keys, null, null);
      String where = "seed " + SEED + ", sample of " + sampleSize;
      assertEquals(ROWS_PER_PARTITION, fromBatches.numRows, where);
      assertEquals(Math.min(sampleSize, ROWS_PER_PARTITION), fromBatches.points.size(), where);
      assertEquals(fromRows.points.size(), fromBatches.points.size(), where);
      for (int i = 0; i < fromRows.points.size(); i++) {
        RangeBounds.Point a = fromRows.points.get(i);
        RangeBounds.Point b = fromBatches.points.get(i);
        assertEquals(a.index, b.index, where + ", point " + i);
        assertTrue(Arrays.equals(a.words, b.words), where + ", point " + i);
      }
    }
  }

  /** Every position is kept about as often as any other: the skips draw a uniform sample. */
  @org.junit.jupiter.api.Test
  void reservoirSkipsKeepEveryPositionAlike() {
    int size = 10;
    int numRows = 200;
    int trials = 20_000;
    long[] kept = new long[numRows];
    for (int t = 0; t < trials; t++) {
      int[] slots = new int[size];
      for (int i = 0; i < size; i++) {
        slots[i] = i;
      }
      ReservoirSkips skips = new ReservoirSkips(size, SEED + t);
      while (skips.next() < numRows) {
        long at = skips.next();
        slots[skips.replace()] = (int) at;
      }
      for (int slot : slots) {
        kept[slot]++;
      }
    }
    // Each position is kept with probability size / numRows: 1000 of the trials, sd about 31.
    double expected = (double) trials * size / numRows;
    for (int i = 0; i < numRows; i++) {
      assertTrue(Math.abs(kept[i] - expected) < 6 * Math.sqrt(expected),
          "seed " + SEED + ": position " + i + " kept " + kept[i] + " times, expected " + expected);
    }
  }

  /** The rows as one batch of columns: the long key (nulls kept) and the int payload. */
  private static org.apache.spark.sql.vectorized.ColumnarBatch batch(List<UnsafeRow> rows) {
    var keys = new org.apache.spark.sql.execution.vectorized.OnHeapColumnVector(
        Math.max(1, rows.size()), DataTypes.LongType);
    var values = new org.apache.spark.sql.execution.vectorized.OnHeapColumnVector(
        Math.max(1, rows.size()), DataTypes.IntegerType);
    for (int i = 0; i < rows.size(); i++) {
      if (rows.get(i).isNullAt(0)) {
        keys.putNull(i);
      } else {
        keys.putLong(i, rows.get(i).getLong(0));
      }
      values.putInt(i, rows.get(i).getInt(1));
    }
    return new org.apache.spark.sql.vectorized.ColumnarBatch(
        new org.apache.spark.sql.vectorized.ColumnVector[] {keys, values}, rows.size());
  }

  private static List<List<UnsafeRow>> input(Fixture fixture, KeyType keyType, KeyChoice keys) {
    SplittableRandom random = new SplittableRandom(SEED);
    List<List<UnsafeRow>> input = new ArrayList<>();
    for (int p = 0; p < INPUT_PARTITIONS; p++) {
      List<UnsafeRow> rows = new ArrayList<>(ROWS_PER_PARTITION);
      for (int i = 0; i < ROWS_PER_PARTITION; i++) {
        rows.add(fixture.row(keyType, keys.key(random, p, i), i));
      }
      input.add(rows);
    }
    return input;
  }

  private static Iterator<InternalRow> iterator(List<UnsafeRow> rows) {
    return new ArrayList<InternalRow>(rows).iterator();
  }
}
