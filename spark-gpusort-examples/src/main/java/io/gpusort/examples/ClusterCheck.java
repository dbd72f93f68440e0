package io.gpusort.examples;

import static org.apache.spark.sql.functions.col;

import io.gpusort.GpuSort;
import io.gpusort.memory.RunningTasks;
import io.gpusort.spark.GpuSortPlugin;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.api.java.function.Function2;
import org.apache.spark.api.java.function.MapPartitionsFunction;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * A job for a cluster with the plugin on (spark-submit with {@code spark.plugins}): sorts rows
 * globally with {@code GpuSort.byKey} and with SQL's {@code ORDER BY} (the extension's
 * replacement), writes both as CSV, and checks on the driver that every partition is sorted, that
 * partitions follow each other in order, that tasks ran on at least {@code minExecutors}
 * executors, that each of them reported its engine to the driver, and that the plugin's task
 * hooks tell each executor which tasks it runs (its page-locked arena pins only between them).
 * Prints one line starting {@code CLUSTER CHECK OK} and exits 0, or fails with the reason.
 *
 * <pre>
 *   spark-submit --class io.gpusort.examples.ClusterCheck ... OUTPUT_DIR [ROWS] [MIN_EXECUTORS] [GATE_DIR]
 * </pre>
 *
 * <p>Output: {@code OUTPUT_DIR/bykey} (columns k, id) and {@code OUTPUT_DIR/sql} (s, k, id), one
 * file per partition, in partition order by file name. Both sorts must be planned as the engine's
 * exchange ({@code GpuRangeSortExchange}, the default global mode).
 *
 * <p>With {@code GATE_DIR} (a directory every executor and the caller see), the job is a fault
 * drill instead: it writes {@code byKey}'s output to {@code OUTPUT_DIR/fault}, and each task of
 * the write's first attempt, after its partition's blocks were merged, creates
 * {@code GATE_DIR/started-<partition>-<executor>} and waits (two minutes at most) until
 * {@code GATE_DIR/go} exists. The caller kills a worker meanwhile; the job must finish through
 * Spark's retries.
 */
public final class ClusterCheck {
  private ClusterCheck() {}

  public static void main(String[] args) {
    String output = args[0];
    long rows = args.length > 1 ? Long.parseLong(args[1]) : 200_000;
    int minExecutors = args.length > 2 ? Integer.parseInt(args[2]) : 2;
    String gate = args.length > 3 ? args[3] : null;
    SparkSession spark = SparkSession.builder().appName("spark-gpusort cluster check")
        .getOrCreate();
    // Four partitions out of each sort, so that the sorting stages spread over the executors.
    spark.conf().set("spark.gpusort.global.partitions", "4");
    spark.conf().set("spark.sql.shuffle.partitions", "4");
    spark.conf().set("spark.sql.adaptive.coalescePartitions.enabled", "false");
    try {
      awaitExecutors(spark, minExecutors);
      checkTasksReported(spark);
      Dataset<Row> input = spark.range(0, rows, 1, 6).selectExpr("id",
          "(id * 2654435761) % 1000003 AS k", "concat('r', CAST(id % 101 AS STRING)) AS s");
      input.createOrReplaceTempView("t");

      Dataset<Row> byKey = input.select(col("k"), col("id"))
          .transform(GpuSort.byKey(col("k"), col("id")));
      if (gate != null) {
        writeThroughGate(byKey, gate, output + "/fault");
        System.out.println("CLUSTER CHECK OK rows=" + rows + " (through the gate)");
        return;
      }
      Set<String> executors = checkOrder(byKey, rows, "byKey");
      requireExchange(byKey, "byKey");
      byKey.write().mode("overwrite").csv(output + "/bykey");

      Dataset<Row> sql = spark.sql("SELECT s, k, id FROM t ORDER BY s DESC, k, id");
      executors.addAll(checkOrder(sql, rows, "ORDER BY"));
      requireExchange(sql, "ORDER BY");
      sql.write().mode("overwrite").csv(output + "/sql");

      if (executors.size() < minExecutors) {
        throw new IllegalStateException("tasks ran on " + executors + ", fewer than "
            + minExecutors + " executors");
      }
      var reports = GpuSortPlugin.executorEngines();
      if (!reports.keySet().containsAll(executors)) {
        throw new IllegalStateException("executors " + executors + " but engine reports from "
            + reports.keySet());
      }
      System.out.println("CLUSTER CHECK OK rows=" + rows + " executors=" + executors
          + " engines=" + reports.values());
    } finally {
      spark.stop();
    }
  }

  /**
   * Fails unless every task of a small job finds itself among its executor's running tasks
   * ({@link RunningTasks}), which on an executor only the plugin's task hooks report.
   */
  private static void checkTasksReported(SparkSession spark) {
    List<Long> unreported = JavaSparkContext.fromSparkContext(spark.sparkContext())
        .parallelize(List.of(0, 1, 2, 3, 4, 5), 6)
        .map(x -> TaskContext.get().taskAttemptId())
        .filter(id -> !RunningTasks.isRunning(id)).collect();
    if (!unreported.isEmpty()) {
      throw new IllegalStateException("tasks " + unreported + " ran unreported to their "
          + "executors' page-locked arenas");
    }
  }

  /** Fails unless {@code sorted} was planned as the engine's exchange that sorts and merges. */
  private static void requireExchange(Dataset<Row> sorted, String what) {
    String plan = sorted.queryExecution().executedPlan().toString();
    if (!plan.contains("GpuRangeSortExchange [")) {
      throw new IllegalStateException(what + " did not run as GpuSort's exchange:\n" + plan);
    }
  }

  /**
   * Writes {@code sorted} as CSV to {@code output}, each task held at the gate (see the class
   * comment) after its first row, that is after its blocks were fetched and merged.
   */
  private static void writeThroughGate(Dataset<Row> sorted, String gate, String output) {
    MapPartitionsFunction<Row, Row> held = rows -> {
      TaskContext task = TaskContext.get();
      if (rows.hasNext() && task.stageAttemptNumber() == 0 && task.attemptNumber() == 0) {
        Path dir = Path.of(gate);
        Files.createFile(dir.resolve("started-" + task.partitionId() + "-"
            + SparkEnv.get().executorId()));
        long deadline = System.nanoTime() + 120_000_000_000L;
        while (!Files.exists(dir.resolve("go")) && System.nanoTime() < deadline) {
          Thread.sleep(100);
        }
      }
      return rows;
    };
    sorted.mapPartitions(held, Encoders.row(sorted.schema())).write().mode("overwrite")
        .csv(output);
  }

  /** Waits up to two minutes until {@code count} executors have registered with the driver. */
  private static void awaitExecutors(SparkSession spark, int count) {
    long deadline = System.nanoTime() + 120_000_000_000L;
    // getExecutorMemoryStatus lists the driver's block manager too.
    while (spark.sparkContext().getExecutorMemoryStatus().size() < count + 1) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("only " + (spark.sparkContext()
            .getExecutorMemoryStatus().size() - 1) + " executors registered, " + count
            + " wanted");
      }
      try {
        Thread.sleep(200);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      }
    }
  }

  /**
   * Every partition sorted, partitions in order, all rows there; the executors that ran the
   * final sorting stage (the check runs in that stage's tasks, after the sort).
   * Rows compare by their columns' string forms for the key columns that the query sorts by.
   */
  private static Set<String> checkOrder(Dataset<Row> sorted, long rows, String what) {
    boolean withString = sorted.columns().length == 3;
    Function2<Integer, Iterator<Row>, Iterator<String[]>> summarize = (partition, it) -> {
      long count = 0;
      String first = null;
      String last = null;
      String error = "";
      while (it.hasNext()) {
        Row r = it.next();
        String key = sortKey(r, withString);
        if (last != null && key.compareTo(last) < 0 && error.isEmpty()) {
          error = "partition " + partition + " out of order at row " + count;
        }
        if (first == null) {
          first = key;
        }
        last = key;
        count++;
      }
      String[] summary = {String.valueOf(partition), String.valueOf(count), first, last, error,
          SparkEnv.get().executorId()};
      return List.<String[]>of(summary).iterator();
    };
    List<String[]> parts = sorted.javaRDD().mapPartitionsWithIndex(summarize, false).collect();
    long total = 0;
    String previousLast = null;
    Set<String> executors = new TreeSet<>();
    for (String[] p : new ArrayList<>(parts)) {
      if (!p[4].isEmpty()) {
        throw new IllegalStateException(what + ": " + p[4]);
      }
      total += Long.parseLong(p[1]);
      if (p[2] != null) {
        if (previousLast != null && p[2].compareTo(previousLast) < 0) {
          throw new IllegalStateException(what + ": partition " + p[0] + " starts below the "
              + "previous partition's end");
        }
        previousLast = p[3];
      }
      executors.add(p[5]);
    }
    if (total != rows) {
      throw new IllegalStateException(what + ": " + total + " rows, expected " + rows);
    }
    return executors;
  }

  /**
   * A string that orders as the query's key: k and id zero-padded ascending; for ORDER BY s DESC,
   * s is mapped to its complement so that ascending string order is descending s.
   */
  private static String sortKey(Row r, boolean withString) {
    String numbers = String.format("%020d%020d", r.getLong(r.size() - 2), r.getLong(r.size() - 1));
    if (!withString) {
      return numbers;
    }
    StringBuilder inverted = new StringBuilder();
    for (char c : r.getString(0).toCharArray()) {
      inverted.append((char) (0xFFFF - c));
    }
    // A string sorts before its extensions ascending, so after them descending: pad with the
    // highest char.
    while (inverted.length() < 8) {
      inverted.append('\uFFFF');
    }
    return inverted + numbers;
  }
}
