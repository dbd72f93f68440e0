package io.gpusort.examples;

import static io.gpusort.examples.TeraFilesTest.concat;
import static io.gpusort.examples.TeraFilesTest.hadoopPath;
import static io.gpusort.examples.TeraFilesTest.record;
import static io.gpusort.examples.TeraFilesTest.withMaxPartitionBytes;
import static io.gpusort.examples.TeraFilesTest.writeRecords;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.apache.spark.sql.functions.col;

import io.gpusort.GpuSort;
import io.gpusort.compat.ScalaCollections;
import io.gpusort.examples.TeraScan.TeraSplit;
import io.gpusort.sql.ByteSliceVector;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import org.apache.hadoop.fs.FileStatus;
import org.apache.spark.SparkException;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.catalyst.expressions.codegen.UnsafeRowWriter;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.execution.ColumnarToRowExec;
import org.apache.spark.sql.execution.InputAdapter;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.WholeStageCodegenExec;
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanExec;
import org.apache.spark.sql.execution.adaptive.QueryStageExec;
import org.apache.spark.sql.execution.datasources.v2.BatchScanExec;
import org.apache.spark.sql.execution.metric.SQLMetric;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.util.SerializableConfiguration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import scala.Tuple2;

class TeraSortSourceTest {
  @TempDir
  Path tmp;

  // ---------------------------------------------------------------- records and pieces

  @Test
  void readsTheFilesRecordsInNameOrderThenFileOrder() throws IOException {
    Path dir = Files.createDirectory(tmp.resolve("in"));
    // More than two batches in the first file read whole; names out of creation order.
    writeRecords(dir.resolve("part-00001"), 0, 2 * TeraReaders.BATCH_RECORDS + 7);
    writeRecords(dir.resolve("part-00000"), 10_000, 5);
    writeRecords(dir.resolve("part-00002"), 0, 0);
    Files.writeString(dir.resolve("_SUCCESS"), "");

    Dataset<Row> data = TeraFiles.read(SharedSpark.get(), hadoopPath(dir));
    assertEquals(2, data.rdd().getNumPartitions(), "a piece a non-empty file");
    List<Long> ids = rowIds(data.collectAsList());
    List<Long> expected = new ArrayList<>();
    for (long id = 10_000; id < 10_005; id++) {
      expected.add(id);
    }
    for (long id = 0; id < 2 * TeraReaders.BATCH_RECORDS + 7; id++) {
      expected.add(id);
    }
    assertEquals(expected, ids);
  }

  @Test
  void smallPiecesCutMidRecordBytesReadEveryRecordOnce() throws IOException {
    Path dir = Files.createDirectory(tmp.resolve("in"));
    writeRecords(dir.resolve("a"), 0, 2_345);
    writeRecords(dir.resolve("b"), 2_345, 1);
    writeRecords(dir.resolve("c"), 2_346, 0);
    writeRecords(dir.resolve("d"), 2_346, 19);

    // 1,050 bytes is 10.5 records: pieces of 10 records at most, 235 + 1 + 2 of them.
    List<Long> ids = withMaxPartitionBytes(1_050, () -> {
      Dataset<Row> data = TeraFiles.read(SharedSpark.get(), hadoopPath(dir));
      assertEquals(235 + 1 + 2, data.rdd().getNumPartitions());
      return rowIds(data.collectAsList());
    });
    List<Long> expected = new ArrayList<>();
    for (long id = 0; id < 2_365; id++) {
      expected.add(id);
    }
    assertEquals(expected, ids, "every record once, in file and offset order");
  }

  @Test
  void filesAreCutIntoNearlyEqualPiecesOfWholeRecords() throws IOException {
    List<FileStatus> files = List.of(file("a", 1_000), file("empty", 0), file("b", 100));
    // At most 3 records a piece: a's 10 records as 3, 3, 2, 2; b's one record alone.
    List<TeraSplit> splits = TeraScan.splits(files, 399);
    assertEquals(List.of("a@0+3", "a@300+3", "a@600+2", "a@800+2", "b@0+1"),
        splits.stream().map(TeraSortSourceTest::describe).toList());
    // Less than a record still reads a record a piece.
    assertEquals(10, TeraScan.splits(files.subList(0, 1), 99).size());
    assertEquals(List.of("a@0+10"), TeraScan.splits(files.subList(0, 1), 128L << 20).stream()
        .map(TeraSortSourceTest::describe).toList());
  }

  @Test
  void anEmptyInputHasNoRecords() throws IOException {
    Path dir = Files.createDirectory(tmp.resolve("in"));
    assertEquals(0, TeraFiles.read(SharedSpark.get(), hadoopPath(dir)).count());
    writeRecords(dir.resolve("empty"), 0, 0);
    Dataset<Row> data = TeraFiles.read(SharedSpark.get(), hadoopPath(dir));
    assertEquals(0, data.rdd().getNumPartitions());
    assertEquals(List.of(), data.collectAsList());
  }

  @Test
  void aPartialRecordFailsTheLoadNamingTheFile() throws IOException {
    Path dir = Files.createDirectory(tmp.resolve("in"));
    writeRecords(dir.resolve("part-00000"), 0, 2);
    Files.write(dir.resolve("part-00001"), new byte[250]);
    String expected = "part-00001 has 250 bytes, not a whole number of 100-byte terasort "
        + "records (50 bytes left over)";

    IOException e = assertThrows(IOException.class,
        () -> TeraFiles.read(SharedSpark.get(), hadoopPath(dir)));
    assertTrue(e.getMessage().contains(expected), e.getMessage());
    // The short name, as any Spark user would load the files.
    UncheckedIOException byName = assertThrows(UncheckedIOException.class,
        () -> SharedSpark.get().read().format("terasort").load(dir.toString()));
    assertTrue(byName.getMessage().contains(expected), byName.getMessage());
  }

  @Test
  void aMissingPathFailsTheLoad() {
    IOException e = assertThrows(IOException.class,
        () -> TeraFiles.read(SharedSpark.get(), hadoopPath(tmp.resolve("missing"))));
    assertTrue(e.getMessage().contains("missing"), e.getMessage());
  }

  @Test
  void reportsTheRowCount() throws IOException {
    Path dir = Files.createDirectory(tmp.resolve("in"));
    writeRecords(dir.resolve("a"), 0, 123);
    Dataset<Row> data = TeraFiles.read(SharedSpark.get(), hadoopPath(dir));
    var stats = data.queryExecution()
        .optimizedPlan().stats();
    assertEquals(123, stats.rowCount().get().longValue());
    assertEquals(123 * 100, stats.sizeInBytes().longValue());
  }

  // ---------------------------------------------------------------- columns and plans

  @Test
  void thePlanIsARowConversionOverAColumnarScan() throws IOException {
    Dataset<Row> data = TeraFiles.read(SharedSpark.get(), hadoopPath(input(10)));
    SparkPlan plan = executedPlan(data);
    // What GpuSort's columnar intake looks for: the conversion alone in its codegen stage.
    SparkPlan below = plan instanceof WholeStageCodegenExec stage ? stage.child() : plan;
    ColumnarToRowExec toRows = assertInstanceOf(ColumnarToRowExec.class, below, plan.toString());
    assertTrue(toRows.child().supportsColumnar(), plan.toString());
    // Codegen puts an adapter between the stage and its input, which passes the batches on.
    SparkPlan source = toRows.child() instanceof InputAdapter adapter ? adapter.child()
        : toRows.child();
    assertTrue(assertInstanceOf(BatchScanExec.class, source).supportsColumnar());
    assertEquals(List.of(2), batchColumns(data));
  }

  @Test
  void gpuSortTakesTheBatchesWithoutRows() throws IOException {
    int rows = 3_000;
    Dataset<Row> sorted = TeraFiles.read(SharedSpark.get(), hadoopPath(input(rows)))
        .transform(GpuSort.<Row>byKey(col(TeraRecords.KEY_COLUMN)));
    List<Row> result = sorted.collectAsList();

    assertEquals(rows, result.size());
    for (int i = 1; i < rows; i++) {
      assertTrue(TeraRecords.compareKeys(result.get(i - 1).getAs(0), 0, result.get(i).getAs(0),
          0) <= 0, "key order at row " + i);
    }
    assertEquals(rows, sumMetric(executedPlan(sorted), "columnarRows"),
        "rows the sort took in from the scan's batches\n" + executedPlan(sorted));
  }

  /**
   * The global sort's range bounds are sampled from a scan of the keys alone: each piece is read
   * once for them, in batches of one column, besides the sort's own read of both columns.
   */
  @Test
  void gpuSortSamplesItsBoundsFromTheKeysAlone() throws IOException {
    int rows = 3_000;
    Path dir = input(rows);
    List<Row> result = withMaxPartitionBytes(100_000, () -> {
      long before = TeraReaders.keyBatchReads();
      Dataset<Row> data = TeraFiles.read(SharedSpark.get(), hadoopPath(dir));
      assertEquals(3, data.rdd().getNumPartitions());
      List<Row> sorted = data.transform(GpuSort.<Row>byKey(col(TeraRecords.KEY_COLUMN)))
          .collectAsList();
      assertEquals(3, TeraReaders.keyBatchReads() - before, "pieces read as keys alone");
      return sorted;
    });
    assertEquals(rows, result.size());
    for (int i = 1; i < rows; i++) {
      assertTrue(TeraRecords.compareKeys(result.get(i - 1).getAs(0), 0, result.get(i).getAs(0),
          0) <= 0, "key order at row " + i);
    }
    assertEquals(rows, rowIds(result).stream().distinct().count(), "every record once");
  }

  /**
   * Keys that tie on their first 8 bytes (the encoded prefix's first word) and repeat: the bounds
   * sampled from the keys alone still compare with the sort's rows, and the order is Spark's.
   */
  @Test
  void keysAloneBoundTiedAndRepeatedKeys() throws IOException {
    int rows = 4_000;
    Path dir = Files.createDirectory(tmp.resolve("in"));
    java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
    for (long id = 0; id < rows; id++) {
      byte[] record = record(id);
      Arrays.fill(record, 0, 8, (byte) 0x7f);
      record[8] = (byte) (id * 37 % 5 * 60);
      record[9] = (byte) (id * 11 % 3);
      bytes.writeBytes(record);
    }
    Files.write(dir.resolve("part-00000"), bytes.toByteArray());
    SparkSession spark = SharedSpark.get();
    List<Row> expected = withMaxPartitionBytes(100_000, () -> TeraFiles.read(spark,
        hadoopPath(dir)).orderBy(TeraRecords.KEY_COLUMN).collectAsList());
    List<Row> sorted = withMaxPartitionBytes(100_000, () -> {
      long before = TeraReaders.keyBatchReads();
      List<Row> result = TeraFiles.read(spark, hadoopPath(dir))
          .transform(GpuSort.<Row>byKey(col(TeraRecords.KEY_COLUMN))).collectAsList();
      assertEquals(4, TeraReaders.keyBatchReads() - before, "pieces read as keys alone");
      return result;
    });
    assertEquals(rows, sorted.size());
    for (int i = 0; i < rows; i++) {
      assertArrayEquals((byte[]) expected.get(i).getAs(0), (byte[]) sorted.get(i).getAs(0),
          "key at row " + i);
    }
    assertEquals(rows, rowIds(sorted).stream().distinct().count(), "every record once");
  }

  @Test
  void batchesAreByteSlicesOfTheRecords() throws IOException {
    int rows = TeraReaders.BATCH_RECORDS + 3;
    Dataset<Row> data = TeraFiles.read(SharedSpark.get(), hadoopPath(input(rows)));
    List<String> checked = scan(data).executeColumnar().toJavaRDD().map(batch -> {
      List<String> failures = new ArrayList<>();
      for (int c = 0; c < batch.numCols(); c++) {
        if (!(batch.column(c) instanceof ByteSliceVector)) {
          failures.add("column " + c + " is a " + batch.column(c).getClass());
        }
      }
      for (int r = 0; r < batch.numRows(); r++) {
        byte[] record = concat(batch.column(0).getBinary(r), batch.column(1).getBinary(r));
        if (!Arrays.equals(record, record(TeraRecords.rowId(record, 0)))) {
          failures.add("row " + r + " of a batch");
        }
      }
      return batch.numRows() + " " + failures;
    }).collect();
    assertEquals(List.of(TeraReaders.BATCH_RECORDS + " []", "3 []"), checked);
  }

  @Test
  void readingOneColumnReadsOnlyThatColumn() throws IOException {
    int rows = 50;
    Dataset<Row> data = TeraFiles.read(SharedSpark.get(), hadoopPath(input(rows)));

    Dataset<Row> keys = data.select(TeraRecords.KEY_COLUMN);
    assertEquals(List.of(1), batchColumns(keys));
    assertEquals(List.of(TeraRecords.KEY_COLUMN), List.of(scan(keys).scan().readSchema()
        .fieldNames()));
    Dataset<Row> values = data.select(TeraRecords.VALUE_COLUMN);
    assertEquals(List.of(1), batchColumns(values));
    assertEquals(List.of(TeraRecords.VALUE_COLUMN), List.of(scan(values).scan().readSchema()
        .fieldNames()));

    List<Row> keyRows = keys.collectAsList();
    List<Row> valueRows = values.collectAsList();
    for (int id = 0; id < rows; id++) {
      byte[] record = record(id);
      assertArrayEquals(Arrays.copyOf(record, 10), keyRows.get(id).getAs(0), "key of " + id);
      assertArrayEquals(Arrays.copyOfRange(record, 10, 100), valueRows.get(id).getAs(0),
          "value of " + id);
    }
    assertEquals(rows, data.count(), "a count reads no column");
  }

  @Test
  void theRowReaderWritesEachRecordAsARow() throws IOException {
    Path dir = input(TeraReaders.BATCH_RECORDS + 2);
    SparkSession spark = SharedSpark.get();
    var conf = JavaSparkContext.fromSparkContext(spark.sparkContext())
        .broadcast(new SerializableConfiguration(spark.sparkContext().hadoopConfiguration()));
    // From record 1 on, to read a piece that does not start the file.
    TeraSplit split = new TeraSplit(dir.resolve("part-00000").toUri(), 100,
        TeraReaders.BATCH_RECORDS + 1, new String[0]);

    try (PartitionReader<InternalRow> both =
             new TeraReaders(conf, TeraRecords.SCHEMA).createReader(split)) {
      for (int id = 1; id <= TeraReaders.BATCH_RECORDS + 1; id++) {
        assertTrue(both.next(), "row " + id);
        InternalRow row = both.get();
        assertArrayEquals(record(id), concat(row.getBinary(0), row.getBinary(1)), "row " + id);
      }
      assertFalse(both.next());
    }
    StructType values = new StructType().add(TeraRecords.SCHEMA.apply(TeraRecords.VALUE_COLUMN));
    try (PartitionReader<InternalRow> valueOnly =
             new TeraReaders(conf, values).createReader(split)) {
      assertTrue(valueOnly.next());
      assertEquals(1, valueOnly.get().numFields());
      assertArrayEquals(Arrays.copyOfRange(record(1), 10, 100), valueOnly.get().getBinary(0));
    }
  }

  // ---------------------------------------------------------------- writing

  @Test
  void readThenWriteGivesTheSameBytes() throws IOException {
    Path dir = Files.createDirectory(tmp.resolve("in"));
    writeRecords(dir.resolve("a"), 0, 1_234);
    writeRecords(dir.resolve("b"), 1_234, 5);
    Path out = Files.createDirectory(tmp.resolve("out"));
    SparkSession spark = SharedSpark.get();

    long written = TeraFiles.write(TeraFiles.read(spark, hadoopPath(dir)), hadoopPath(out),
        spark.sparkContext().hadoopConfiguration());

    assertEquals(1_239, written);
    assertArrayEquals(Files.readAllBytes(dir.resolve("a")),
        Files.readAllBytes(out.resolve("part-00000")));
    assertArrayEquals(Files.readAllBytes(dir.resolve("b")),
        Files.readAllBytes(out.resolve("part-00001")));
  }

  @Test
  void rowsAreWrittenInBlocksOfWholeRecords() {
    int numRows = TeraFiles.CountedBlocks.BLOCK_RECORDS + 3;
    UnsafeRowWriter writer = new UnsafeRowWriter(2, 16 + 96);
    List<InternalRow> rows = new ArrayList<>();
    for (int id = 0; id < numRows - 1; id++) {
      byte[] record = record(id);
      writer.reset();
      writer.zeroOutNullBytes();
      writer.write(0, record, 0, 10);
      writer.write(1, record, 10, 90);
      rows.add(writer.getRow().copy());
    }
    // A row not in Spark's format is copied from its fields.
    byte[] last = record(numRows - 1);
    rows.add(new GenericInternalRow(new Object[] {Arrays.copyOf(last, 10),
        Arrays.copyOfRange(last, 10, 100)}));
    var written = SharedSpark.get().sparkContext().longAccumulator();
    Iterator<Tuple2<byte[], byte[]>> blocks = new TeraFiles.CountedBlocks(rows.iterator(), 0, 1,
        written);

    List<byte[]> keys = new ArrayList<>();
    while (blocks.hasNext()) {
      Tuple2<byte[], byte[]> block = blocks.next();
      assertEquals(0, block._2().length, "a block has no value");
      keys.add(block._1().clone());
    }
    assertEquals(2, keys.size());
    assertEquals(TeraFiles.CountedBlocks.BLOCK_RECORDS * 100, keys.get(0).length);
    assertEquals(300, keys.get(1).length);
    byte[] all = concat(keys.get(0), keys.get(1));
    for (int id = 0; id < numRows; id++) {
      assertArrayEquals(record(id), Arrays.copyOfRange(all, 100 * id, 100 * id + 100),
          "record " + id);
    }
    assertEquals(numRows, written.value());
  }

  @Test
  void aRowWithANullOrShortFieldFailsItsBlock() {
    List<InternalRow> rows = List.of(new GenericInternalRow(new Object[] {new byte[10], null}));
    var blocks = new TeraFiles.CountedBlocks(rows.iterator(), 0, 1,
        SharedSpark.get().sparkContext().longAccumulator());
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, blocks::next);
    assertEquals("a terasort record is a 10-byte key and a 90-byte value, not 10 and -1 bytes",
        e.getMessage());
  }

  @Test
  void writingAKeyOfTheWrongLengthFailsTheTask() throws IOException {
    SparkSession spark = SharedSpark.get();
    Dataset<Row> records = spark.createDataFrame(
        List.of(RowFactory.create(new byte[9], new byte[90])), TeraRecords.SCHEMA);
    Path out = Files.createDirectory(tmp.resolve("out"));
    SparkException e = assertThrows(SparkException.class, () -> TeraFiles.write(records,
        hadoopPath(out), spark.sparkContext().hadoopConfiguration()));
    String cause = FileSort.rootCauseLine(e);
    assertTrue(cause.contains("a 10-byte key and a 90-byte value, not 9 and 90 bytes"), cause);
  }

  // ---------------------------------------------------------------- helpers

  /** A directory of one file, {@code part-00000}, of the records of rows 0 to rows - 1. */
  private Path input(int rows) throws IOException {
    Path dir = Files.createDirectory(tmp.resolve("in"));
    writeRecords(dir.resolve("part-00000"), 0, rows);
    return dir;
  }

  private static List<Long> rowIds(List<Row> rows) {
    return rows.stream()
        .map(row -> TeraRecords.rowId(concat(row.getAs("key"), row.getAs("value")), 0))
        .toList();
  }

  private static SparkPlan executedPlan(Dataset<Row> data) {
    return data.queryExecution().executedPlan();
  }

  /** The terasort scan in {@code data}'s executed plan. */
  private static BatchScanExec scan(Dataset<Row> data) {
    BatchScanExec scan = findScan(executedPlan(data));
    assertNotNull(scan, executedPlan(data).toString());
    return scan;
  }

  private static BatchScanExec findScan(SparkPlan plan) {
    if (plan instanceof BatchScanExec scan) {
      return scan;
    }
    for (SparkPlan child : ScalaCollections.asJava(plan.children())) {
      BatchScanExec scan = findScan(child);
      if (scan != null) {
        return scan;
      }
    }
    return null;
  }

  /** The distinct column counts of the batches {@code data}'s scan hands out. */
  private static List<Integer> batchColumns(Dataset<Row> data) {
    return scan(data).executeColumnar().toJavaRDD().map(batch -> batch.numCols()).distinct()
        .collect();
  }

  /** The sum of metric {@code key} over the nodes of {@code plan} that have it. */
  private static long sumMetric(SparkPlan plan, String key) {
    long sum = 0;
    SQLMetric metric = ScalaCollections.asJava(plan.metrics()).get(key);
    if (metric != null) {
      sum += metric.value();
    }
    if (plan instanceof AdaptiveSparkPlanExec adaptive) {
      sum += sumMetric(adaptive.executedPlan(), key);
    }
    if (plan instanceof QueryStageExec stage) {
      sum += sumMetric(stage.plan(), key);
    }
    for (SparkPlan child : ScalaCollections.asJava(plan.children())) {
      sum += sumMetric(child, key);
    }
    return sum;
  }

  private static FileStatus file(String name, long bytes) {
    return new FileStatus(bytes, false, 1, 1L << 20, 0, new org.apache.hadoop.fs.Path(
        "file:/terasort/" + name));
  }

  private static String describe(TeraSplit split) {
    String path = split.file().getPath();
    return path.substring(path.lastIndexOf('/') + 1) + "@" + split.startByte() + "+"
        + split.numRecords();
  }
}
