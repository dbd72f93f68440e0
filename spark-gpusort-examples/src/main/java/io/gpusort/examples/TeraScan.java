package io.gpusort.examples;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.OptionalLong;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.BlockLocation;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.LocatedFileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connector.read.Batch;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.Statistics;
import org.apache.spark.sql.connector.read.SupportsReportStatistics;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.util.SerializableConfiguration;

/**
 * A scan of TeraSort files ({@link TeraSortSource}) for the columns of {@code readSchema}, each
 * file cut into pieces ({@link #splits}) that are read in columnar batches ({@link TeraReaders}).
 * The pieces do not depend on the columns read, so a scan of the keys alone (as GpuSort plans one
 * to sample its range bounds) reads the same rows in the same partitions as a scan of both.
 */
final class TeraScan implements Scan, Batch, SupportsReportStatistics {
  private final SparkSession spark;
  private final Path input;
  private final List<FileStatus> files;
  private final Configuration conf;
  private final StructType readSchema;
  private final long maxPartitionBytes;

  /**
   * @param maxPartitionBytes the most bytes a partition reads ({@code
   *     spark.sql.files.maxPartitionBytes}), at least one record whatever it says
   */
  TeraScan(SparkSession spark, Path input, List<FileStatus> files, Configuration conf,
      StructType readSchema, long maxPartitionBytes) {
    this.spark = spark;
    this.input = input;
    this.files = files;
    this.conf = conf;
    this.readSchema = readSchema;
    this.maxPartitionBytes = maxPartitionBytes;
  }

  @Override
  public StructType readSchema() {
    return readSchema;
  }

  @Override
  public String description() {
    return "TeraScan " + input + " " + Arrays.toString(readSchema.fieldNames());
  }

  @Override
  public Batch toBatch() {
    return this;
  }

  /** Every piece is read in batches, so Spark need not plan the pieces to know. */
  @Override
  public ColumnarSupportMode columnarSupportMode() {
    return ColumnarSupportMode.SUPPORTED;
  }

  @Override
  public InputPartition[] planInputPartitions() {
    try {
      return splits(files, maxPartitionBytes).toArray(new InputPartition[0]);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public PartitionReaderFactory createReaderFactory() {
    // Broadcast once for all tasks rather than shipped with each, as Spark's file scans do.
    var broadcastConf = JavaSparkContext.fromSparkContext(spark.sparkContext())
        .broadcast(new SerializableConfiguration(conf));
    return new TeraReaders(broadcastConf, readSchema);
  }

  @Override
  public Statistics estimateStatistics() {
    long numRows = TeraInputFormat.totalBytes(files) / TeraRecords.RECORD_BYTES;
    long rowBytes = 0;
    for (StructField field : readSchema.fields()) {
      rowBytes += TeraReaders.fieldBytes(field.name());
    }
    long sizeInBytes = numRows * rowBytes;
    return new Statistics() {
      @Override
      public OptionalLong sizeInBytes() {
        return OptionalLong.of(sizeInBytes);
      }

      @Override
      public OptionalLong numRows() {
        return OptionalLong.of(numRows);
      }
    };
  }

  /**
   * A piece of a file: {@code numRecords} whole records from byte {@code startByte}, best read
   * on {@code hosts} (those holding most of its bytes; none where the file system does not say).
   */
  record TeraSplit(URI file, long startByte, long numRecords, String[] hosts)
      implements InputPartition {
    @Override
    public String[] preferredLocations() {
      return hosts;
    }
  }

  /**
   * The pieces of {@code files}, in file order then offset order: each file cut into as few
   * pieces of nearly equal size (their record counts differ by one at most) as keep every piece
   * within {@code maxPartitionBytes} rounded down to whole records, at least one record a piece;
   * an empty file gives none. Every record lies in exactly one piece.
   */
  static List<TeraSplit> splits(List<FileStatus> files, long maxPartitionBytes)
      throws IOException {
    long maxRecords = Math.max(1, maxPartitionBytes / TeraRecords.RECORD_BYTES);
    List<TeraSplit> splits = new ArrayList<>();
    for (FileStatus file : files) {
      long records = file.getLen() / TeraRecords.RECORD_BYTES;
      if (records == 0) {
        continue;
      }
      long pieces = (records + maxRecords - 1) / maxRecords;
      long base = records / pieces;
      long longer = records % pieces;
      long start = 0;
      for (long piece = 0; piece < pieces; piece++) {
        long count = base + (piece < longer ? 1 : 0);
        long startByte = start * TeraRecords.RECORD_BYTES;
        long numBytes = count * TeraRecords.RECORD_BYTES;
        splits.add(new TeraSplit(file.getPath().toUri(), startByte, count,
            hosts(file, startByte, numBytes)));
        start += count;
      }
    }
    return splits;
  }

  /**
   * The hosts of the block that holds most of {@code file}'s bytes {@code [start, start +
   * length)}, where the listing carried block locations (HDFS does), less "localhost", which
   * every local file system reports and which names no executor.
   */
  private static String[] hosts(FileStatus file, long start, long length) throws IOException {
    if (!(file instanceof LocatedFileStatus located) || located.getBlockLocations() == null) {
      return new String[0];
    }
    BlockLocation best = null;
    long bestOverlap = 0;
    for (BlockLocation block : located.getBlockLocations()) {
      long overlap = Math.min(start + length, block.getOffset() + block.getLength())
          - Math.max(start, block.getOffset());
      if (overlap > bestOverlap) {
        best = block;
        bestOverlap = overlap;
      }
    }
    if (best == null) {
      return new String[0];
    }
    return Arrays.stream(best.getHosts()).filter(h -> !h.equals("localhost"))
        .toArray(String[]::new);
  }
}
