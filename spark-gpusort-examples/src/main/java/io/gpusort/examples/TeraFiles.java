package io.gpusort.examples;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Arrays;
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
  /**
   * The accumulator that counts the records {@link #write} wrote, each task's count growing a
   * block at a time ({@link SortProgress} reads it: Spark's own count is of blocks).
   */
  static final String RECORDS_WRITTEN = "terasort records written";

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
    RDD<InternalRow> rows = records.queryExecution().toRdd();
    LongAccumulator written = records.sparkSession().sparkContext()
        .longAccumulator(RECORDS_WRITTEN);
    JavaPairRDD<byte[], byte[]> pairs = rows.toJavaRDD().mapPartitionsToPair(
        it -> new CountedBlocks(it, key, value, written));
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
   * The rows' records in blocks of up to {@link #BLOCK_RECORDS}, each block a pair of the records'
   * bytes and an empty value ({@link TeraOutputFormat} writes it whole), counted into an
   * accumulator when the partition ends. A full block is one array reused for every block, which
   * the writer allows; the last, shorter one an array of its length. Each block's records are
   * added to the accumulator as the block is handed on. A row whose key or value is null or of
   * another length fails the task, as the writer fails such a record.
   */
  static final class CountedBlocks implements Iterator<Tuple2<byte[], byte[]>> {
    /** Records a block holds: 100 KB, one write call to the file's buffer. */
    static final int BLOCK_RECORDS = 1024;
    private static final byte[] NO_VALUE = new byte[0];

    private final Iterator<InternalRow> rows;
    private final int key;
    private final int value;
    private final LongAccumulator written;
    private final byte[] block = new byte[BLOCK_RECORDS * TeraRecords.RECORD_BYTES];
    private final Tuple2<byte[], byte[]> full = new Tuple2<>(block, NO_VALUE);

    CountedBlocks(Iterator<InternalRow> rows, int key, int value, LongAccumulator written) {
      this.rows = rows;
      this.key = key;
      this.value = value;
      this.written = written;
    }

    @Override
    public boolean hasNext() {
      return rows.hasNext();
    }

    @Override
    public Tuple2<byte[], byte[]> next() {
      int n = 0;
      do {
        copyRecord(rows.next(), n * TeraRecords.RECORD_BYTES);
        n++;
      } while (n < BLOCK_RECORDS && rows.hasNext());
      // A failed attempt's updates are not applied (the accumulator counts no failed values).
      written.add(n);
      return n == BLOCK_RECORDS ? full
          : new Tuple2<>(Arrays.copyOf(block, n * TeraRecords.RECORD_BYTES), NO_VALUE);
    }

    /** Copies the row's key and value into the block from byte {@code at}. */
    private void copyRecord(InternalRow row, int at) {
      if (row instanceof UnsafeRow unsafe && copyField(unsafe, key, at, TeraRecords.KEY_BYTES)
          && copyField(unsafe, value, at + TeraRecords.KEY_BYTES, TeraRecords.VALUE_BYTES)) {
        return;
      }
      byte[] k = row.isNullAt(key) ? null : row.getBinary(key);
      byte[] v = row.isNullAt(value) ? null : row.getBinary(value);
      int keyBytes = k == null ? -1 : k.length;
      int valueBytes = v == null ? -1 : v.length;
      if (keyBytes != TeraRecords.KEY_BYTES || valueBytes != TeraRecords.VALUE_BYTES) {
        throw new IllegalArgumentException(TeraOutputFormat.shapeError(keyBytes, valueBytes));
      }
      System.arraycopy(k, 0, block, at, keyBytes);
      System.arraycopy(v, 0, block, at + keyBytes, valueBytes);
    }

    /**
     * Copies binary field {@code ordinal} of {@code row} into the block at {@code at} where it is
     * not null and exactly {@code bytes} long; returns whether it did.
     */
    private boolean copyField(UnsafeRow row, int ordinal, int at, int bytes) {
      if (row.isNullAt(ordinal)) {
        return false;
      }
      // A variable-length field's slot: its offset in the row (high half) and its size (low).
      long offsetAndSize = row.getLong(ordinal);
      int offset = (int) (offsetAndSize >>> 32);
      int size = (int) offsetAndSize;
      if (size != bytes) {
        return false;
      }
      Platform.copyMemory(row.getBaseObject(), row.getBaseOffset() + offset, block,
          Platform.BYTE_ARRAY_OFFSET + at, size);
      return true;
    }
  }
}
