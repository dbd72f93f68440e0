package io.gpusort.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import io.gpusort.GpuSort;
import io.gpusort.compat.ScalaCollections;
import io.gpusort.config.GpuSortConf;
import io.gpusort.engine.KeyBatch;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.apache.spark.SparkConf;
import org.apache.spark.memory.TaskMemoryManager;
import org.apache.spark.memory.UnifiedMemoryManager;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A run's row index starts at the size Spark's statistics give a partition (a materialized cache,
 * a range), so that it does not grow, copying itself, while the rows come in; without statistics,
 * or where Spark refuses that much memory, it starts small and doubles as before.
 */
class IndexSizingTest {
  @AfterEach
  void reset() {
    SparkTestSession.resetGpuSortConf();
  }

  @Test
  void firstCapacityIsTheEstimateAndAnEighthWithinTheRun() {
    assertEquals(RunBuilder.INITIAL_ROWS, RunBuilder.firstCapacity(0, 1L << 40, 1));
    assertEquals(RunBuilder.INITIAL_ROWS, RunBuilder.firstCapacity(100, 1L << 40, 1));
    assertEquals(90_000, RunBuilder.firstCapacity(80_000, 1L << 40, 1));
    // A run of 1 MiB holds at most 1 MiB / (8 + 8 + 16) rows of two-word keys.
    assertEquals((1 << 20) / 32, RunBuilder.firstCapacity(1_000_000, 1 << 20, 2));
    assertEquals(KeyBatch.MAX_ROWS, RunBuilder.firstCapacity(Long.MAX_VALUE / 2, 1L << 50, 1));
  }

  @Test
  void anEstimatedRunTakesItsRowsWithoutGrowing() {
    int rows = 50_000;
    RunBuilder builder = builder(1L << 30, RunBuilder.firstCapacity(rows, 1L << 40, 1));
    long copiesBefore = RunBuilder.indexCopies();
    fill(builder, rows);
    assertEquals(rows + rows / 8, builder.capacity());
    assertEquals(0, RunBuilder.indexCopies() - copiesBefore, "the index grew");
    builder.close();
  }

  @Test
  void anEstimateSparkRefusesFallsBackToGrowing() {
    int rows = 50_000;
    // 4 MiB of task memory: not the 60 MB the estimate of 1e6 rows asks for, enough for the rows.
    RunBuilder builder = builder(4L << 20, RunBuilder.firstCapacity(1_000_000, 1L << 40, 1));
    fill(builder, rows);
    assertTrue(builder.capacity() >= rows && builder.capacity() < 2 * rows,
        "capacity " + builder.capacity());
    builder.close();
  }

  /**
   * An estimate whose index Spark grants but that leaves less than a page for the rows (a task
   * granted it while it ran alone): the index is given back and grown with the rows, rather than
   * the run failing for memory with no row in it.
   */
  @Test
  void anEstimateThatLeavesNoRoomForTheRowsIsGivenBack() {
    long taskMemory = 4L << 20;
    int estimate = 100_000;
    // What the estimate's index and the first page take, measured on a builder of its own.
    SortMemory probeMemory = memory(taskMemory);
    RunBuilder probe = builder(probeMemory, estimate);
    assertTrue(probe.tryMakeRoom(16));
    long indexAndPage = probeMemory.getUsed();
    probe.close();

    SortMemory memory = memory(taskMemory);
    // Leave the index and half a page: execution may take the storage half too, 8 MiB in all.
    long filler = 2 * taskMemory - indexAndPage + PAGE_BYTES / 2;
    assertTrue(memory.tryReserve(filler));
    RunBuilder builder = builder(memory, estimate);
    int rows = 20_000;
    fill(builder, rows);
    assertTrue(builder.capacity() >= rows && builder.capacity() < estimate,
        "capacity " + builder.capacity());
    builder.close();
    memory.unreserve(filler);
    assertEquals(0, memory.getUsed());
  }

  @Test
  void aMaterializedCacheOrARangeGivesEachPartitionsRows() {
    SparkSession spark = SparkTestSession.get();
    Dataset<Row> range = spark.range(0, 40_000, 1, 4).toDF();
    assertEquals(10_000, estimateOf(range, "id"));
    Dataset<Row> projected = range.selectExpr("id * 7919 % 40000 AS k", "id");
    assertEquals(0, estimateOf(projected, "k"), "a projection's statistics carry no rows");
    assertEquals(0, estimateOf(projected.filter("k > 5"), "k"),
        "a filter's statistics carry no rows");
    Dataset<Row> cached = projected.filter("k > 5").cache();
    try {
      assertEquals(0, estimateOf(cached, "k"), "a cache not yet materialized");
      long count = cached.count();
      assertEquals((count + 3) / 4, estimateOf(cached, "k"));
    } finally {
      cached.unpersist(true);
    }
  }

  @Test
  void aSortOfACachedInputFillsItsIndexOnceAndIsRight() {
    // The spilling run's small memory refuses the estimate by design.
    assumeFalse(SparkTestSession.SPILLING);
    SparkSession spark = SparkTestSession.get();
    Dataset<Row> cached = scrambledRange(spark).cache();
    try {
      cached.count();
      long copiesBefore = RunBuilder.indexCopies();
      List<Row> rows = cached.transform(GpuSort.withinPartitions("k")).collectAsList();
      assertEquals(0, RunBuilder.indexCopies() - copiesBefore, "an index grew, copying itself");
      assertEquals(400_000, rows.size());
      long previous = Long.MIN_VALUE;
      for (int i = 0; i < rows.size(); i++) {
        long k = rows.get(i).getLong(0);
        if (i != 200_000) {
          assertTrue(previous <= k, "row " + i + " out of order");
        }
        previous = k;
      }
    } finally {
      cached.unpersist(true);
    }
    // The same rows uncached (with the cache still there, Spark 3.5 reads this query's rows from
    // it) and filtered, so that no statistics give their count.
    long copies = RunBuilder.indexCopies();
    scrambledRange(spark).filter("k >= 0").transform(GpuSort.withinPartitions("k")).collectAsList();
    assertTrue(RunBuilder.indexCopies() > copies, "without statistics the index grows");
  }

  /**
   * A global sort's reducers size their index from the rows the map side wrote for their
   * partitions: above a materialized cache (whose map side knows its rows too) no index grows.
   */
  @Test
  void aGlobalSortsReducersFillTheirIndexOnce() {
    assumeFalse(SparkTestSession.SPILLING);
    SparkSession spark = SparkTestSession.get();
    spark.conf().set(GpuSortConf.OUTPUT_PARTITIONS.key(), "2");
    Dataset<Row> cached = scrambledRange(spark).cache();
    try {
      cached.count();
      long copiesBefore = RunBuilder.indexCopies();
      List<Row> rows = cached.transform(GpuSort.byKey("k")).collectAsList();
      assertEquals(0, RunBuilder.indexCopies() - copiesBefore, "an index grew, copying itself");
      assertEquals(400_000, rows.size());
      for (int i = 1; i < rows.size(); i++) {
        assertTrue(rows.get(i - 1).getLong(0) <= rows.get(i).getLong(0), "row " + i);
      }
    } finally {
      cached.unpersist(true);
    }
  }

  /** 400,000 rows in 2 partitions: a key {@code k} out of order, and {@code id}. */
  private static Dataset<Row> scrambledRange(SparkSession spark) {
    return spark.range(0, 400_000, 1, 2).selectExpr("(id * 2654435761) % 1000003 AS k", "id");
  }

  /** The estimate the GpuSort node sorting {@code input} by {@code key} gets from its child. */
  private static long estimateOf(Dataset<Row> input, String key) {
    // Descending: Spark's optimizer drops a local sort by a range's own ascending id, as it does
    // for sortWithinPartitions
    Dataset<Row> sorted = input.transform(GpuSort.withinPartitions(
        org.apache.spark.sql.functions.col(key).desc()));
    GpuSortExec node = (GpuSortExec) SortResources.sortNode(sorted);
    return SortInputs.expectedPartitionRows(node.child(),
        node.child().execute().getNumPartitions());
  }

  private static final int PAGE_BYTES = 64 << 10;

  private static RunBuilder builder(long taskMemory, int firstCapacity) {
    return builder(memory(taskMemory), firstCapacity);
  }

  /** A task's memory: {@code taskMemory} for execution, as much again for storage. */
  private static SortMemory memory(long taskMemory) {
    UnifiedMemoryManager manager =
        new UnifiedMemoryManager(new SparkConf(), taskMemory * 2, taskMemory, 1);
    return new SortMemory(new TaskMemoryManager(manager, 0));
  }

  private static RunBuilder builder(SortMemory memory, int firstCapacity) {
    AttributeReference key = RowKeyEncoderTest.attribute("k", DataTypes.LongType, false);
    StructType schema = new StructType(new StructField[] {
        new StructField("k", DataTypes.LongType, false, Metadata.empty())});
    KeySpec spec = KeySpec.of(List.of(RowKeyEncoderTest.sortOrder(key, false, true)),
        ScalaCollections.list(List.<Attribute>of(key)), 16);
    SortPlan plan = new SortPlan(spec, schema, GpuSortConf.of(Map.of()), 4, 64L << 20);
    return new RunBuilder(new RowKeys(plan), memory, PAGE_BYTES, false, 1, () -> null,
        firstCapacity);
  }

  private static void fill(RunBuilder builder, int rows) {
    SplittableRandom random = new SplittableRandom(7);
    UnsafeRow row = new UnsafeRow(1);
    byte[] bytes = new byte[16];
    row.pointTo(bytes, bytes.length);
    for (int i = 0; i < rows; i++) {
      row.setLong(0, random.nextLong());
      assertTrue(builder.tryMakeRoom(row.getSizeInBytes()), "refused at row " + i);
      builder.append(row);
    }
  }
}
