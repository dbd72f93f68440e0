package io.gpusort.examples;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.spark.SparkException;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import scala.Tuple2;

class TeraFilesTest {
  private static final long SEED = 77L;
  private static final String MAX_PARTITION_BYTES = "spark.sql.files.maxPartitionBytes";

  @TempDir
  Path tmp;

  @Test
  void smallSplitsReadEveryRecordExactlyOnce() throws IOException {
    Path dir = Files.createDirectory(tmp.resolve("in"));
    int firstFileRows = 10_007;
    writeRecords(dir.resolve("a"), 0, firstFileRows);
    writeRecords(dir.resolve("b"), firstFileRows, 3);
    writeRecords(dir.resolve("empty"), 0, 0);
    // Hadoop skips these: markers and hidden files are not input.
    Files.writeString(dir.resolve("_SUCCESS"), "");
    Files.writeString(dir.resolve(".a.crc"), "not a record");
    Files.createDirectory(dir.resolve("sub"));
    int rows = firstFileRows + 3;

    // Not a multiple of 100: each piece is the whole records within it, 1,000 of them.
    List<Row> collected = withMaxPartitionBytes(100_003, () -> {
      Dataset<Row> data = TeraFiles.read(SharedSpark.get(), hadoopPath(dir));
      assertEquals(11 + 1, data.rdd().getNumPartitions(), "pieces of 1,000 records at most");
      return data.collectAsList();
    });
    int[] seen = new int[rows];
    for (Row row : collected) {
      byte[] record = concat(row.getAs("key"), row.getAs("value"));
      long id = TeraRecords.rowId(record, 0);
      assertArrayEquals(record(id), record, "record of row " + id);
      seen[(int) id]++;
    }
    for (int id = 0; id < rows; id++) {
      assertEquals(1, seen[id], "times row " + id + " was read, split size 100,003 bytes");
    }
  }

  @Test
  void inputFilesAreListedInNameOrderAndPartialRecordsNamed() throws IOException {
    Path dir = Files.createDirectory(tmp.resolve("in"));
    writeRecords(dir.resolve("part-00001"), 0, 2);
    writeRecords(dir.resolve("part-00000"), 2, 1);
    Configuration conf = SharedSpark.get().sparkContext().hadoopConfiguration();

    List<FileStatus> files = TeraInputFormat.inputFiles(conf, hadoopPath(dir));
    assertEquals(List.of("part-00000", "part-00001"),
        files.stream().map(f -> f.getPath().getName()).toList());
    assertEquals(300, TeraInputFormat.totalBytes(files));
    assertNull(TeraInputFormat.partialRecordError(files));

    Files.write(dir.resolve("part-00002"), new byte[250]);
    String error = TeraInputFormat.partialRecordError(
        TeraInputFormat.inputFiles(conf, hadoopPath(dir)));
    assertTrue(error != null && error.contains("part-00002 has 250 bytes, not a whole number of "
        + "100-byte terasort records (50 bytes left over)"), error);
  }

  @Test
  void writerWritesOneFileAPartitionNamedByIt() throws IOException {
    SparkSession spark = SharedSpark.get();
    JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
    List<Tuple2<byte[], byte[]>> pairs = new ArrayList<>();
    for (int row = 0; row < 5; row++) {
      byte[] record = record(row);
      pairs.add(new Tuple2<>(Arrays.copyOf(record, 10), Arrays.copyOfRange(record, 10, 100)));
    }
    // Three partitions, the middle one empty: rows 0-1, none, rows 2-4.
    List<List<Tuple2<byte[], byte[]>>> partitions = List.of(
        new ArrayList<>(pairs.subList(0, 2)), List.of(), new ArrayList<>(pairs.subList(2, 5)));
    JavaPairRDD<byte[], byte[]> records = JavaPairRDD.fromJavaRDD(
        jsc.parallelize(partitions, 3).flatMap(List::iterator));
    Path dir = Files.createDirectory(tmp.resolve("out"));

    TeraFiles.save(records, hadoopPath(dir), spark.sparkContext().hadoopConfiguration());

    assertEquals(List.of("_SUCCESS", "part-00000", "part-00001", "part-00002"), visibleFiles(dir));
    assertArrayEquals(concat(record(0), record(1)), Files.readAllBytes(dir.resolve("part-00000")));
    assertEquals(0, Files.size(dir.resolve("part-00001")), "an empty partition's file is empty");
    assertArrayEquals(concat(record(2), record(3), record(4)),
        Files.readAllBytes(dir.resolve("part-00002")));
  }

  @Test
  void writerFailsTheTaskOnARecordOfTheWrongLength() throws IOException {
    SparkSession spark = SharedSpark.get();
    JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
    JavaPairRDD<byte[], byte[]> records = JavaPairRDD.fromJavaRDD(jsc.parallelize(List.of(1), 1)
        .map(i -> new Tuple2<>(new byte[9], new byte[90])));
    Path dir = Files.createDirectory(tmp.resolve("out"));
    SparkException e = assertThrows(SparkException.class, () -> TeraFiles.save(records,
        hadoopPath(dir), spark.sparkContext().hadoopConfiguration()));
    String cause = FileSort.rootCauseLine(e);
    assertTrue(cause.contains("a 10-byte key and a 90-byte value, not 9 and 90 bytes"), cause);
  }

  @Test
  void fileNamesStopWhereTheyWouldNoLongerSortByPartition() {
    assertEquals("part-00000", TeraOutputFormat.fileName(0));
    assertEquals("part-99999", TeraOutputFormat.fileName(TeraOutputFormat.MAX_FILES - 1));
    assertThrows(IllegalArgumentException.class,
        () -> TeraOutputFormat.fileName(TeraOutputFormat.MAX_FILES));
  }

  // ---------------------------------------------------------------- helpers

  /** {@code body}'s result with {@code spark.sql.files.maxPartitionBytes} set meanwhile. */
  static <T> T withMaxPartitionBytes(long bytes, Callable<T> body) throws IOException {
    SparkSession spark = SharedSpark.get();
    spark.conf().set(MAX_PARTITION_BYTES, Long.toString(bytes));
    try {
      return body.call();
    } catch (IOException | RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw new IllegalStateException(e);
    } finally {
      spark.conf().unset(MAX_PARTITION_BYTES);
    }
  }

  static byte[] record(long row) {
    byte[] record = new byte[TeraRecords.RECORD_BYTES];
    TeraRecords.generate(SEED, row, record, 0);
    return record;
  }

  /** Writes the records of rows {@code first} to {@code first + count - 1} to {@code file}. */
  static void writeRecords(Path file, long first, int count) throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    for (long row = first; row < first + count; row++) {
      bytes.write(record(row));
    }
    Files.write(file, bytes.toByteArray());
  }

  static byte[] concat(byte[]... parts) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    for (byte[] part : parts) {
      bytes.writeBytes(part);
    }
    return bytes.toByteArray();
  }

  static org.apache.hadoop.fs.Path hadoopPath(Path path) {
    return new org.apache.hadoop.fs.Path(path.toUri());
  }

  /** The names in {@code dir} that do not start with a dot, sorted. */
  static List<String> visibleFiles(Path dir) throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      return files.map(p -> p.getFileName().toString()).filter(n -> !n.startsWith("."))
          .sorted().toList();
    }
  }
}
