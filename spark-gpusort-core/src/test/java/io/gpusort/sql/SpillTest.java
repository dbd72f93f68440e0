package io.gpusort.sql;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.spark_partition_id;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpusort.GpuSort;
import io.gpusort.config.GpuSortConf;
import io.gpusort.spill.SpillFile;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.function.MapPartitionsFunction;
import org.apache.spark.memory.MemoryConsumer;
import org.apache.spark.memory.TaskMemoryManager;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.types.DataTypes;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Sorts that spill: forced by {@code spark.gpusort.spill.rowsThreshold} (more runs than one merge
 * reads at once, so spilled runs are also merged into fewer files first), or asked by another
 * consumer of the task while the output is read. Each result must equal Spark's, the spills must
 * show in the node's and the task's metrics, and everything the sort held must be given back, on
 * success and on failure.
 */
class SpillTest {
  private static final int ROWS = 20_000;
  private static final String THRESHOLD = GpuSortConf.SPILL_ROWS_THRESHOLD.key();
  private static final String PREFIX = GpuSortConf.STRING_PREFIX_BYTES.key();
  private static final String MODE = GpuSortConf.GLOBAL_MODE.key();

  private SparkSession spark;
  private Dataset<Row> input;

  @BeforeEach
  void data() {
    spark = SparkTestSession.get();
    // Two partitions of 10,000 rows; a threshold of 150 rows makes 67 runs per task, over the 64
    // one merge reads at once.
    input = spark.range(0, ROWS, 1, 2).selectExpr("id", "(id * 7919) % 1000 AS k",
        "concat('s', CAST((id * 31) % 97 AS STRING)) AS s",
        "repeat('x', CAST(id % 50 AS INT)) AS pad");
  }

  @AfterEach
  void reset() {
    SparkTestSession.resetGpuSortConf();
  }

  @Test
  void forcedSpillsKeepSparksOrder() throws InterruptedException {
    spark.conf().set(THRESHOLD, "150");
    spark.conf().set(PREFIX, "1");
    SortResources.Snapshot before = SortResources.take();
    Column[][] orders = {{col("k"), col("id")}, {col("s").desc(), col("id")}};
    for (Column[] order : orders) {
      for (String mode : List.of("sort", "merge")) {
        spark.conf().set(MODE, mode);
        String where = "byKey " + List.of(order) + " mode=" + mode;
        Dataset<Row> ours = input.transform(GpuSort.byKey(order));
        assertEquals(input.orderBy(order).collectAsList(), ours.collectAsList(), where);
        assertSpilled(ours, where);
      }
      String where = "withinPartitions " + List.of(order);
      // The partition of each row, read in partition order: the same rows, in the same order, in
      // the same partitions.
      Dataset<Row> ours = input.transform(GpuSort.withinPartitions(order))
          .withColumn("p", spark_partition_id());
      assertEquals(input.sortWithinPartitions(order).withColumn("p", spark_partition_id())
          .collectAsList(), ours.collectAsList(), where);
      assertSpilled(ours, where);
    }
    SortResources.assertReleased(before, "after the spilling sorts");
  }

  @Test
  void sqlSortsSpillThroughThePlugin() throws InterruptedException {
    spark.conf().set(THRESHOLD, "150");
    input.createOrReplaceTempView("spill_t");
    try {
      SortResources.Snapshot before = SortResources.take();
      String query = "SELECT * FROM spill_t ORDER BY s DESC, k, id";
      spark.conf().set(SparkTestSession.SQL_ENABLED, "false");
      List<Row> expected = spark.sql(query).collectAsList();
      spark.conf().set(SparkTestSession.SQL_ENABLED, "true");
      Dataset<Row> ours = spark.sql(query);
      assertEquals(expected, ours.collectAsList());
      assertSpilled(ours, query);
      SortResources.assertReleased(before, "after the SQL sort");
    } finally {
      spark.catalog().dropTempView("spill_t");
    }
  }

  @Test
  void spillsShowInTaskMetrics() throws Exception {
    spark.conf().set(THRESHOLD, "1000");
    AtomicLong diskBytes = new AtomicLong();
    AtomicLong memoryBytes = new AtomicLong();
    SparkListener listener = new SparkListener() {
      @Override
      public void onTaskEnd(SparkListenerTaskEnd end) {
        if (end.taskMetrics() != null) {
          diskBytes.addAndGet(end.taskMetrics().diskBytesSpilled());
          memoryBytes.addAndGet(end.taskMetrics().memoryBytesSpilled());
        }
      }
    };
    spark.sparkContext().addSparkListener(listener);
    try {
      Dataset<Row> ours = input.transform(GpuSort.withinPartitions(col("k")));
      ours.collectAsList();
      spark.sparkContext().listenerBus().waitUntilEmpty();
      long spillSize = SortResources.metric(ours, "spillSize");
      assertTrue(spillSize > 0, "spill size metric");
      assertEquals(spillSize, memoryBytes.get(), "memoryBytesSpilled of the tasks");
      assertTrue(diskBytes.get() > 0, "diskBytesSpilled of the tasks");
    } finally {
      spark.sparkContext().removeSparkListener(listener);
    }
  }

  /**
   * Another consumer of the task asks for more memory than is free while the sorted rows are
   * being read: the sort writes the rest of its run to disk, and the rows that follow are the
   * same as without it.
   */
  @Test
  void anotherConsumerMakesTheOutputSpill() throws InterruptedException {
    Dataset<Row> one = input.coalesce(1);
    SortResources.Snapshot before = SortResources.take();
    Dataset<Row> sorted = one.transform(GpuSort.withinPartitions(col("k"), col("id")));
    Dataset<Long> checked = sorted.mapPartitions((MapPartitionsFunction<Row, Long>) rows -> {
      List<Long> keys = new ArrayList<>();
      long hogGot = 0;
      while (rows.hasNext()) {
        Row r = rows.next();
        keys.add(r.getLong(1) * ROWS + r.getLong(0));
        if (keys.size() == ROWS / 3) {
          hogGot = hogAndRelease();
        }
      }
      keys.add(0, hogGot);
      return keys.iterator();
    }, Encoders.LONG());
    List<Long> result = checked.collectAsList();
    assertTrue(result.get(0) > 0, "the hog got memory back from the sort");
    List<Long> expected = one.orderBy("k", "id").selectExpr("k * " + ROWS + " + id")
        .as(Encoders.LONG()).collectAsList();
    List<Long> keys = result.subList(1, result.size());
    assertEquals(expected.size(), keys.size(), "rows");
    for (int i = 0; i < expected.size(); i++) {
      assertEquals(expected.get(i), keys.get(i), "row " + i);
    }
    assertTrue(SortResources.metric(checked, "numSpills") >= 1, "the output spilled");
    SortResources.assertReleased(before, "after the output spill");
  }

  /** Asks the task for more memory than it can have, then gives back what it got. */
  private static long hogAndRelease() {
    TaskMemoryManager tmm = TaskContext.get().taskMemoryManager();
    MemoryConsumer hog = new MemoryConsumer(tmm, tmm.pageSizeBytes(), tmm.getTungstenMemoryMode()) {
      @Override
      public long spill(long size, MemoryConsumer trigger) {
        return 0;
      }
    };
    long got = hog.acquireMemory(Runtime.getRuntime().maxMemory());
    hog.freeMemory(got);
    return got;
  }

  @Test
  void failureUpstreamReleasesEverything() throws InterruptedException {
    spark.conf().set(THRESHOLD, "500");
    spark.udf().register("fail_late", (UDF1<Long, Long>) id -> {
      if (id == ROWS - 1000) {
        throw new IllegalStateException("upstream failure at row " + id);
      }
      return id;
    }, DataTypes.LongType);
    SortResources.Snapshot before = SortResources.take();
    Dataset<Row> failing = input.selectExpr("fail_late(id) AS id", "k", "s");
    for (Function<Dataset<Row>, Dataset<Row>> sort : List.<Function<Dataset<Row>, Dataset<Row>>>of(
        d -> d.transform(GpuSort.withinPartitions("k")),
        d -> d.transform(GpuSort.byKey("s", "k")))) {
      Throwable error = assertThrows(Throwable.class, () -> sort.apply(failing).collectAsList());
      assertTrue(messages(error).contains("upstream failure at row " + (ROWS - 1000)),
          messages(error));
      SortResources.assertReleased(before, "after the failed sort");
    }
  }

  /**
   * Spill files are written through Spark's serializer manager: compressed
   * ({@code spark.shuffle.spill.compress}), and encrypted where {@code spark.io.encryption.enabled}
   * is on (the spilling test run sets it).
   */
  @Test
  void spillFilesAreCompressedAndEncryptedAsSparksAre() throws Exception {
    boolean encrypted = SparkEnv.get().securityManager().getIOEncryptionKey().isDefined();
    byte[] text = "a spilled row that repeats itself. ".repeat(4000)
        .getBytes(StandardCharsets.US_ASCII);
    SpillFile file = SparkSpillStore.ofExecutor().create();
    try {
      try (OutputStream out = file.openForWrite()) {
        out.write(text);
      }
      byte[] raw = Files.readAllBytes(Path.of(file.toString()));
      assertTrue(raw.length < text.length / 4, "compressed: " + raw.length + " bytes on disk");
      String rawText = new String(raw, StandardCharsets.ISO_8859_1);
      assertFalse(encrypted && rawText.contains("a spilled row"), "plain text in an encrypted file");
      try (InputStream in = file.openForRead()) {
        assertEquals(new String(text, StandardCharsets.US_ASCII),
            new String(in.readAllBytes(), StandardCharsets.US_ASCII));
      }
    } finally {
      file.delete();
    }
    assertFalse(Files.exists(Path.of(file.toString())));
  }

  private static void assertSpilled(Dataset<?> executed, String where) {
    long spills = SortResources.metric(executed, "numSpills");
    assertTrue(spills > 0, where + ": no spill reported");
    assertTrue(SortResources.metric(executed, "spillSize") > 0, where + ": no spill size");
  }

  private static String messages(Throwable error) {
    StringBuilder text = new StringBuilder();
    for (Throwable t = error; t != null; t = t.getCause()) {
      text.append(t).append('\n');
    }
    return text.toString();
  }
}
