package io.gpusort.examples;

import java.io.IOException;
import java.util.Iterator;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.io.BytesWritable;
import org.apache.hadoop.io.LongWritable;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.codegen.UnsafeRowWriter;
import org.apache.spark.util.LongAccumulator;
import scala.Tuple2;

/**
 * TeraSort files to and from Spark: records read as a DataFrame of {@link TeraRecords#SCHEMA}
 * through {@link TeraInputFormat}, and written through {@link TeraOutputFormat} as one
 * {@code part-NNNNN} file per partition.
 */
final class TeraFiles {
  private TeraFiles() {}

  /**
   * The records of the files {@link TeraInputFormat} lists for {@code input}, one partition per
   * Hadoop split, as the columns {@code key} and {@code value}. Each record's bytes are copied
   * once, from Hadoop's reused buffer into Spark's row format; no external {@link Row} is made.
   * Check the files' lengths first ({@link TeraInputFormat#partialRecordError}): Hadoop fails a
   * partial record only in the task that reads it.
   *
   * @param conf the Hadoop configuration (copied), such as the session's, where
   *     {@code mapreduce.input.fileinputformat.split.maxsize} bounds the split size
   */
  static Dataset<Row> read(SparkSession spark, Path input, Configuration conf)
      throws IOException {
    JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
    JavaPairRDD<LongWritable, BytesWritable> records = jsc.newAPIHadoopRDD(
        TeraInputFormat.jobConf(conf, input), TeraInputFormat.class, LongWritable.class,
        BytesWritable.class);
    RDD<InternalRow> rows = records.mapPartitions(TeraFiles::toRows, true).rdd();
    // Spark's own entry for rows already in its format: Java sees the Scala package-private
    // method, which skips the conversion of each external Row that createDataFrame would do.
    return ((org.apache.spark.sql.classic.SparkSession) spark)
        .internalCreateDataFrame(rows, TeraRecords.SCHEMA, false);
  }

  /**
   * The records as Spark rows: one {@code UnsafeRow} reused for every record, as Spark's scans
   * do (operators that keep a row copy it).
   */
  private static Iterator<InternalRow> toRows(Iterator<Tuple2<LongWritable, BytesWritable>> in) {
    // 8 bytes of null bits, two 8-byte field slots, the key and value padded to whole words.
    UnsafeRowWriter writer = new UnsafeRowWriter(2, 16 + 96);
    return new Iterator<>() {
      @Override
      public boolean hasNext() {
        return in.hasNext();
      }

      @Override
      public InternalRow next() {
        byte[] record = in.next()._2().getBytes();
        writer.reset();
        writer.zeroOutNullBytes();
        writer.write(0, record, 0, TeraRecords.KEY_BYTES);
        writer.write(1, record, TeraRecords.KEY_BYTES, TeraRecords.VALUE_BYTES);
        return writer.getRow();
      }
    };
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

  /** Key and value of each row, counted into an accumulator when the partition ends. */
  private static final class CountedPairs implements Iterator<Tuple2<byte[], byte[]>> {
    private final Iterator<InternalRow> rows;
    private final int key;
    private final int value;
    private final LongAccumulator written;
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
      return new Tuple2<>(row.getBinary(key), row.getBinary(value));
    }
  }
}
