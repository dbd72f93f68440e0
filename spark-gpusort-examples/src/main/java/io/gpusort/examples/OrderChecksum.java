package io.gpusort.examples;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.apache.spark.api.java.function.Function2;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;

/**
 * Checksums of a sorted dataset that let two sorts of the same input be compared inside Spark,
 * in one pass over each, without collecting rows or joining by position.
 *
 * <ul>
 *   <li>{@code keySequence}: a polynomial hash modulo 2<sup>61</sup>-1 of the key of every row in
 *       output order (partition by partition, as the sort delivers them), so equal values mean the
 *       same key at every position. Keys are compared as Spark compares them: -0.0 equals 0.0
 *       and all NaNs are equal.
 *   <li>{@code rowSum}, {@code rowMixSum}: two order-independent sums of a 64-bit hash of every
 *       whole row, doubles taken bit for bit (-0.0 is not 0.0), so equal values mean the same
 *       multiset of rows.
 * </ul>
 *
 * <p>A row's key is a function of the row, so the same key sequence and the same row multiset
 * together mean the same rows within every run of equal keys: exactly what two correct sorts of
 * the same input share, as Spark's sort is not stable. Equal checksums of different outputs
 * happen with probability about {@code rows / 2^61}.
 */
final class OrderChecksum {
  private static final long MODULUS = (1L << 61) - 1;
  /** Any fixed base below the modulus: different sequences collide only at a polynomial's roots. */
  private static final long BASE = 0x0A3F_9C1B_57D2_E46BL % MODULUS;

  final long rows;
  final long keySequence;
  final long rowSum;
  final long rowMixSum;

  private OrderChecksum(long rows, long keySequence, long rowSum, long rowMixSum) {
    this.rows = rows;
    this.keySequence = keySequence;
    this.rowSum = rowSum;
    this.rowMixSum = rowMixSum;
  }

  /** Checksums of {@code sorted}, whose sort keys are the columns {@code keyColumns}. */
  static OrderChecksum of(Dataset<Row> sorted, List<String> keyColumns) {
    Dataset<Row> hashes = sorted.select(keyHash(sorted, keyColumns), rowHash(sorted));
    List<long[]> parts = hashes.javaRDD().mapPartitionsWithIndex(SUMMARIZE, true).collect();
    long rows = 0;
    long keySequence = 0;
    long rowSum = 0;
    long rowMixSum = 0;
    // collect() returns partitions in order, which is the sorted order of the whole output.
    for (long[] p : parts) {
      keySequence = addMod(mulMod(keySequence, powMod(BASE, p[0])), p[1]);
      rows += p[0];
      rowSum += p[2];
      rowMixSum += p[3];
    }
    return new OrderChecksum(rows, keySequence, rowSum, rowMixSum);
  }

  /**
   * The checksums of the datasets of {@code parts} one after the other, in that order, as
   * {@link #of} would give for their concatenation.
   */
  static OrderChecksum concat(List<OrderChecksum> parts) {
    long rows = 0;
    long keySequence = 0;
    long rowSum = 0;
    long rowMixSum = 0;
    for (OrderChecksum p : parts) {
      keySequence = addMod(mulMod(keySequence, powMod(BASE, p.rows)), p.keySequence);
      rows += p.rows;
      rowSum += p.rowSum;
      rowMixSum += p.rowMixSum;
    }
    return new OrderChecksum(rows, keySequence, rowSum, rowMixSum);
  }

  /** Null if {@code other} agrees with this, else what differs, in words. */
  String differenceFrom(OrderChecksum other) {
    List<String> diffs = new ArrayList<>();
    if (rows != other.rows) {
      diffs.add("row counts differ (" + rows + " vs " + other.rows + ")");
    }
    if (keySequence != other.keySequence) {
      diffs.add("key sequences differ");
    }
    if (rowSum != other.rowSum || rowMixSum != other.rowMixSum) {
      diffs.add("row multisets differ");
    }
    return diffs.isEmpty() ? null : String.join(", ", diffs);
  }

  /** One summary per partition: {rows, key sequence hash, row hash sum, mixed row hash sum}. */
  private static final Function2<Integer, Iterator<Row>, Iterator<long[]>> SUMMARIZE =
      (partition, it) -> {
        long n = 0;
        long sequence = 0;
        long sum = 0;
        long mixSum = 0;
        while (it.hasNext()) {
          Row r = it.next();
          sequence = addMod(mulMod(sequence, BASE), Long.remainderUnsigned(r.getLong(0), MODULUS));
          long rowHash = r.getLong(1);
          sum += rowHash;
          mixSum += mix(rowHash);
          n++;
        }
        return List.of(new long[] {n, sequence, sum, mixSum}).iterator();
      };

  private static Column keyHash(Dataset<Row> ds, List<String> keyColumns) {
    List<Column> parts = new ArrayList<>();
    for (String name : keyColumns) {
      Column c = ds.col(name);
      parts.add(c.isNull());
      if (isFloating(ds.schema().apply(name))) {
        // Equal keys must hash equally: fold -0.0 into 0.0 (NaN == 0 is false, null stays null).
        parts.add(functions.when(c.equalTo(0), functions.lit(0.0)).otherwise(c.cast("double")));
      } else {
        parts.add(c);
      }
    }
    return functions.xxhash64(parts.toArray(new Column[0]));
  }

  private static Column rowHash(Dataset<Row> ds) {
    List<Column> parts = new ArrayList<>();
    for (StructField field : ds.schema().fields()) {
      Column c = ds.col(field.name());
      parts.add(c.isNull());
      // The string form keeps -0.0 apart from 0.0, which hashing the double would not.
      parts.add(isFloating(field) ? c.cast("string") : c);
    }
    return functions.xxhash64(parts.toArray(new Column[0]));
  }

  private static boolean isFloating(StructField field) {
    return field.dataType().equals(DataTypes.DoubleType)
        || field.dataType().equals(DataTypes.FloatType);
  }

  static long mulMod(long a, long b) {
    long lo = a * b;
    long hi = Math.multiplyHigh(a, b);
    // a, b < 2^61, so the product is below 2^122; fold the bits above 61 back (2^61 = 1 mod M).
    long folded = ((hi << 3) | (lo >>> 61)) + (lo & MODULUS);
    return reduce(folded);
  }

  static long addMod(long a, long b) {
    return reduce(a + b);
  }

  static long powMod(long base, long exponent) {
    long result = 1;
    long b = base;
    for (long e = exponent; e > 0; e >>>= 1) {
      if ((e & 1) != 0) {
        result = mulMod(result, b);
      }
      b = mulMod(b, b);
    }
    return result;
  }

  private static long reduce(long x) {
    long r = (x & MODULUS) + (x >>> 61);
    return r >= MODULUS ? r - MODULUS : r;
  }

  /** A bijective 64-bit finalizer (MurmurHash3's fmix64), so the second sum is independent. */
  private static long mix(long h) {
    h ^= h >>> 33;
    h *= 0xff51afd7ed558ccdL;
    h ^= h >>> 33;
    h *= 0xc4ceb9fe1a85ec53L;
    h ^= h >>> 33;
    return h;
  }
}
