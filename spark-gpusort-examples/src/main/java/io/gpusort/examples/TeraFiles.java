package io.gpusort.examples;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Iterator;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.unsafe.Platform;
import org.apache.spark.util.LongAccumulator;
import scala.Tuple2;

/**
 * TeraSort files to and from Spark: records read as a DataFrame of {@link TeraRecords#SCHEMA}
 * through {@link TeraSortSource}, and written through {@link TeraOutputFormat} as one
 * {@code part-NNNNN} file per partition.
 */
final class TeraFiles {
  private TeraFiles() {}

  /**
   * The records of the files {@link TeraInputFormat} lists for {@code input}, as the columns
   * {@code key} and {@code value}, read by {@link TeraSortSource}: each file in pieces of at most
   * {@code spark.sql.files.maxPartitionBytes} (whole records), a partition a piece, in columnar
   * batches that GpuSort's columnar intake takes without making rows; a query that needs only
   * the keys reads only them. The Hadoop settings are the session's.
   *
   * @throws IOException if {@code input} matches nothing, or a file is not a whole number of
   *     records ({@link TeraInputFormat#partialRecordError}'s message)
   */
  static Dataset<Row> read(SparkSession spark, Path input) throws IOException {
    try {
      return spark.read().format(TeraSortSource.class.getName()).load(input.toString());
    } catch (UncheckedIOException e) {
      throw e.getCause();
    }
  }

  /**
   * Writes {@code records}' columns {@code key} and {@code value} (10 and 90 bytes in every row)
   * as terasort files into {@code dir}, one {@code part-NNNNN} per partition in partition order;
   * returns the records written.
   */
  static long write(Dataset<Row> records, Path dir, Configuration conf) {
    int key = records.schema().fieldIndex(TeraRecords.KEY_COLUMN);
    int value = records.schema().fieldIndex(TeraRecords.VALUE_COLUMN);
    // The plan's own rows, not Dataset.rdd()'s external Rows, which cost a conversion each.
    RDD<InternalRow> rows =
        ((org.apache.spark.sql.classic.Dataset<Row>) records).queryExecution().toRdd();
    LongAccumulator written = records.sparkSession().sparkContext()
        .longAccumulator("terasort records written");
    JavaPairRDD<byte[], byte[]> pairs = rows.toJavaRDD().mapPartitionsToPair(
        it -> new CountedPairs(it, key, value, written));
    save(pairs, dir, conf);
    return written.value();
  }

  /**
   * Writes {@code records} (10-byte keys, 90-byte values) as terasort files into {@code dir},
   * an existing empty directory (a {@link StagedOutput}'s), through Spark's Hadoop writer and
   * the configured output committer.
   */
  static void save(JavaPairRDD<byte[], byte[]> records, Path dir, Configuration conf) {
    records.saveAsNewAPIHadoopFile(dir.toString(), byte[].class, byte[].class,
        TeraOutputFormat.class, new Configuration(conf));
  }

  /**
   * Key and value of each row, counted into an accumulator when the partition ends. The key and
   * value of Spark's own rows are copied into two arrays (and one pair) reused for every row,
   * which {@link TeraOutputFormat}'s writer allows; other rows give arrays of their own.
   */
  static final class CountedPairs implements Iterator<Tuple2<byte[], byte[]>> {
    private final Iterator<InternalRow> rows;
    private final int key;
    private final int value;
    private final LongAccumulator written;
    // One key and one value for the whole partition: the writer writes them before it returns.
    private final byte[] keyBytes = new byte[TeraRecords.KEY_BYTES];
    private final byte[] valueBytes = new byte[TeraRecords.VALUE_BYTES];
    private final Tuple2<byte[], byte[]> pair = new Tuple2<>(keyBytes, valueBytes);
    private long count;
    private boolean counted;

    CountedPairs(Iterator<InternalRow> rows, int key, int value, LongAccumulator written) {
      this.rows = rows;
      this.key = key;
      this.value = value;
      this.written = written;
    }

    @Override
    public boolean hasNext() {
      boolean more = rows.hasNext();
      if (!more && !counted) {
        // Once per task: Spark applies a result task's accumulator updates once, retries or not.
        written.add(count);
        counted = true;
      }
      return more;
    }

    @Override
    public Tuple2<byte[], byte[]> next() {
      InternalRow row = rows.next();
      count++;
      if (row instanceof UnsafeRow unsafe && copyField(unsafe, key, keyBytes)
          && copyField(unsafe, value, valueBytes)) {
        return pair;
      }
      // Not Spark's row format, a null, or a field of the wrong length, which the writer reports.
      return new Tuple2<>(row.getBinary(key), row.getBinary(value));
    }

    /**
     * Copies binary field {@code ordinal} of {@code row} into {@code to} where it is not null and
     * exactly as long; returns whether it did.
     */
    private static boolean copyField(UnsafeRow row, int ordinal, byte[] to) {
      if (row.isNullAt(ordinal)) {
        return false;
      }
      // A variable-length field's slot: its offset in the row (high half) and its size (low).
      long offsetAndSize = row.getLong(ordinal);
      int offset = (int) (offsetAndSize >>> 32);
      int size = (int) offsetAndSize;
      if (size != to.length) {
        return false;
      }
      Platform.copyMemory(row.getBaseObject(), row.getBaseOffset() + offset, to,
          Platform.BYTE_ARRAY_OFFSET, size);
      return true;
    }
  }
}
