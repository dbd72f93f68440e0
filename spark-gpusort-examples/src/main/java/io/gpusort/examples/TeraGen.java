package io.gpusort.examples;

import java.io.IOException;
import java.io.PrintStream;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.NoSuchElementException;
import java.util.TreeMap;
import org.apache.hadoop.fs.Path;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.util.CollectionAccumulator;
import scala.Tuple2;

/**
 * FileSort's {@code --generate}: writes TeraSort records ({@link TeraRecords#generate}) in
 * parallel, one Spark task and one {@code part-NNNNN} file per partition, through
 * {@link TeraOutputFormat} into a {@link StagedOutput}, and prints their count and
 * {@link TeraChecksum}. Partition {@code p} of {@code P} holds rows {@code p*N/P} up to
 * {@code (p+1)*N/P} in row-id order, so the files, read in name order, are rows 0 to N-1 whatever
 * the partitioning, and the same seed always gives the same bytes.
 */
final class TeraGen {
  /**
   * Records per file at most when {@code --partitions} is not given (a gigabyte): more partitions
   * than cores where needed, so that a failed task redoes a bounded amount.
   */
  static final long DEFAULT_ROWS_PER_FILE = 10_000_000L;

  private TeraGen() {}

  /** The checksum of one partition's records, tagged so a repeated report is counted once. */
  private record PartitionChecksum(int partition, TeraChecksum checksum)
      implements java.io.Serializable {}

  /**
   * Generates {@code args.generateRows()} records into {@code args.output()}; returns the exit
   * code. Prints the summary and checksum to {@code out}, and progress lines unless quiet.
   */
  static int run(SparkSession spark, FileSortArgs args, PrintStream out) throws IOException {
    OutputTarget target = OutputTarget.of(spark.sparkContext().hadoopConfiguration(),
        args.output(), args.overwrite(), null);
    long rows = args.generateRows();
    int partitions = args.partitions() > 0 ? args.partitions()
        : defaultPartitions(rows, spark.sparkContext().defaultParallelism());
    TeraChecksum checksum;
    long elapsedNanos;
    try (StagedOutput staged = target.stage();
         SortProgress progress = SortProgress.start(spark.sparkContext(), out,
             SortProgress.Work.generate(rows), args.progressIntervalMillis())) {
      long start = System.nanoTime();
      checksum = generate(spark, rows, partitions, args.seed(), staged.stagingPath());
      staged.commit(args.overwrite());
      elapsedNanos = System.nanoTime() - start;
    }
    out.printf(Locale.ROOT, "FileSort: generated %,d terasort records (seed %d) as %d files in "
        + "%.2f s: checksum %s%n", checksum.records(), args.seed(), partitions,
        ExampleRuntime.seconds(elapsedNanos), checksum.sumHex());
    out.printf(Locale.ROOT, "FileSort: wrote terasort to %s%n", target.path());
    return FileSort.EXIT_OK;
  }

  /** One file per core, or more where that would put over {@link #DEFAULT_ROWS_PER_FILE} in one. */
  static int defaultPartitions(long rows, int cores) {
    long bySize = (rows + DEFAULT_ROWS_PER_FILE - 1) / DEFAULT_ROWS_PER_FILE;
    return (int) Math.min(TeraOutputFormat.MAX_FILES, Math.max(Math.max(1, cores), bySize));
  }

  /**
   * Writes rows 0 to {@code rows - 1} for {@code seed} as {@code partitions} files into
   * {@code dir}, an empty directory; returns their checksum.
   */
  static TeraChecksum generate(SparkSession spark, long rows, int partitions, long seed,
      Path dir) {
    JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
    CollectionAccumulator<PartitionChecksum> sums =
        spark.sparkContext().collectionAccumulator("terasort checksums");
    List<Integer> ids = new ArrayList<>();
    for (int p = 0; p < partitions; p++) {
      ids.add(p);
    }
    JavaPairRDD<byte[], byte[]> records = JavaPairRDD.fromJavaRDD(jsc.parallelize(ids, partitions)
        .mapPartitionsWithIndex((p, it) -> new Records(seed, firstRow(rows, partitions, p),
            firstRow(rows, partitions, p + 1), p, sums), true));
    TeraFiles.save(records, dir, spark.sparkContext().hadoopConfiguration());

    // Keyed by partition: a report repeated by a retried task is counted once.
    TreeMap<Integer, TeraChecksum> byPartition = new TreeMap<>();
    for (PartitionChecksum sum : sums.value()) {
      byPartition.put(sum.partition(), sum.checksum());
    }
    if (byPartition.size() != partitions) {
      throw new IllegalStateException("checksums of " + byPartition.size() + " of " + partitions
          + " generated partitions were reported");
    }
    return byPartition.values().stream().reduce(TeraChecksum.EMPTY, TeraChecksum::plus);
  }

  /** The first row of partition {@code p} of {@code partitions}: {@code p*rows/partitions}. */
  static long firstRow(long rows, int partitions, int p) {
    // In 128 bits: p * rows overflows a long from 2^63 / 100,000 rows.
    return BigInteger.valueOf(rows).multiply(BigInteger.valueOf(p))
        .divide(BigInteger.valueOf(partitions)).longValueExact();
  }

  /**
   * Rows {@code first} to {@code end - 1} as (key, value) pairs of two arrays reused for every
   * record (the writer copies them out at once); adds their checksum to {@code sums} at the end.
   */
  private static final class Records implements Iterator<Tuple2<byte[], byte[]>> {
    private final long seed;
    private final long end;
    private final int partition;
    private final CollectionAccumulator<PartitionChecksum> sums;
    private final byte[] record = new byte[TeraRecords.RECORD_BYTES];
    private final byte[] key = new byte[TeraRecords.KEY_BYTES];
    private final byte[] value = new byte[TeraRecords.VALUE_BYTES];
    private final Tuple2<byte[], byte[]> pair = new Tuple2<>(key, value);
    private final TeraChecksum.Builder checksum = new TeraChecksum.Builder();
    private long next;
    private boolean reported;

    Records(long seed, long first, long end, int partition,
        CollectionAccumulator<PartitionChecksum> sums) {
      this.seed = seed;
      this.next = first;
      this.end = end;
      this.partition = partition;
      this.sums = sums;
    }

    @Override
    public boolean hasNext() {
      if (next < end) {
        return true;
      }
      if (!reported) {
        sums.add(new PartitionChecksum(partition, checksum.build()));
        reported = true;
      }
      return false;
    }

    @Override
    public Tuple2<byte[], byte[]> next() {
      if (next >= end) {
        throw new NoSuchElementException();
      }
      TeraRecords.generate(seed, next++, record, 0);
      checksum.add(record, 0);
      System.arraycopy(record, 0, key, 0, TeraRecords.KEY_BYTES);
      System.arraycopy(record, TeraRecords.KEY_BYTES, value, 0, TeraRecords.VALUE_BYTES);
      return pair;
    }
  }
}
