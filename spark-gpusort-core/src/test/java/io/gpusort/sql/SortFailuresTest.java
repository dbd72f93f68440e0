package io.gpusort.sql;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.expr;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpusort.GpuSort;
import io.gpusort.compat.ScalaCollections;
import io.gpusort.engine.EngineException;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.apache.spark.SparkArithmeticException;
import org.apache.spark.SparkException;
import org.apache.spark.TaskKilledException;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.SortExec;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanExec;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The plugin's own failures reach the user naming the setting that gets the query going without
 * the part that failed; Spark's errors, the input's and kills reach the user as Spark gives them.
 */
class SortFailuresTest {
  private static final String SQL_OFF = "spark.gpusort.sql.enabled=false";
  private static final String ON_CPU = "spark.gpusort.engine=cpu";
  private static final String DEFECT = "simulated defect in the sort";

  @AfterEach
  void reset() {
    ExternalRowSorter.setTaskEnginesForTests(null);
    SparkTestSession.get().conf().unset("spark.sql.ansi.enabled");
    SparkTestSession.resetGpuSortConf();
  }

  /** Each way a sort runs: the replacement of Spark's sorts, the API's, within and global. */
  private static final Map<String, Function<Dataset<Row>, Dataset<Row>>> SORTS = Map.of(
      "SQL sortWithinPartitions", d -> d.sortWithinPartitions("k"),
      "SQL orderBy", d -> d.orderBy("k"),
      "GpuSort.withinPartitions", d -> d.transform(GpuSort.withinPartitions(col("k"))),
      "GpuSort.byKey", d -> d.transform(GpuSort.byKey(col("k"))),
      "GpuSort.byKey, sort mode", d -> d.transform(GpuSort.byKey(col("k"))));

  @Test
  void defectInATasksSortNamesTheSwitch() {
    // An engine with a defect: not an engine's failure (no fallback), the plugin's own.
    ExternalRowSorter.setTaskEnginesForTests(options -> {
      throw new IllegalStateException(DEFECT);
    });
    for (Map.Entry<String, Function<Dataset<Row>, Dataset<Row>>> sort : SORTS.entrySet()) {
      Throwable error = failure(sort.getKey(), sort.getValue());
      String message = error.getMessage();
      assertTrue(message.contains(SQL_OFF) && message.contains(DEFECT),
          sort.getKey() + ": " + message);
      assertTrue(message.contains("Dataset.orderBy"), sort.getKey() + ": " + message);
      assertFalse(message.contains(ON_CPU), sort.getKey() + ": not an engine's: " + message);
      assertNotNull(cause(error, GpuSortFailureException.class), sort.getKey());
      assertInstanceOf(IllegalStateException.class,
          cause(error, GpuSortFailureException.class).getCause());
    }
  }

  @Test
  void enginesFailureNamesTheEngineSetting() {
    // The engine cannot be had (a device lost): nothing to fall back from, the task fails.
    ExternalRowSorter.setTaskEnginesForTests(options -> {
      throw new EngineException("simulated: the device is lost");
    });
    for (String name : List.of("SQL orderBy", "GpuSort.withinPartitions")) {
      String message = failure(name, SORTS.get(name)).getMessage();
      assertTrue(message.contains(ON_CPU) && message.contains(SQL_OFF)
          && message.contains("the device is lost"), name + ": " + message);
    }
  }

  @Test
  void unsupportedKeyReachingTheNodeNamesTheSwitch() {
    SparkSession spark = SparkTestSession.get();
    Dataset<Row> structs = spark.range(0, 10, 1, 1).selectExpr("named_struct('a', id) AS k", "id");
    SortExec sort = sortExec(structs.sortWithinPartitions("k").queryExecution().executedPlan());
    GpuSortExec node = new GpuSortExec(ScalaCollections.immutable(sort.sortOrder()), false, Map.of(),
        sort.child());
    GpuSortFailureException error = assertThrows(GpuSortFailureException.class, node::execute);
    assertTrue(error.getMessage().contains(SQL_OFF), error.getMessage());
    assertInstanceOf(UnsupportedKeyException.class, error.getCause());
  }

  @Test
  void sparksErrorsReachTheUserAsSparkGivesThem() {
    SparkSession spark = SparkTestSession.get();
    spark.conf().set("spark.sql.ansi.enabled", "true");
    Dataset<Row> input = spark.range(0, 1000, 1, 2).select(col("id"));
    // The sort key's own expression overflows.
    Function<Dataset<Row>, Dataset<Row>> overflowingKey =
        d -> d.sortWithinPartitions(expr("id + 9223372036854775000"));
    spark.conf().set(SparkTestSession.SQL_ENABLED, "false");
    Throwable sparks = assertThrows(Throwable.class,
        () -> overflowingKey.apply(input).collectAsList());
    spark.conf().set(SparkTestSession.SQL_ENABLED, "true");
    Throwable ours = assertThrows(Throwable.class,
        () -> overflowingKey.apply(input).collectAsList());
    assertEquals(sparks.getClass(), ours.getClass(), chain(ours));
    assertNotNull(cause(ours, SparkArithmeticException.class), chain(ours));
    assertFalse(chain(ours).contains("spark.gpusort"), chain(ours));
  }

  @Test
  void killsSparksErrorsAndOthersCodeCrossUnchanged() {
    TaskKilledException kill = new TaskKilledException("cancelled");
    assertSame(kill, SortFailures.named(kill));
    RuntimeException interrupted = new RuntimeException(new InterruptedException());
    assertSame(interrupted, SortFailures.named(interrupted));
    RuntimeException sparks = new RuntimeException(new SparkException("a failed job"));
    assertSame(sparks, SortFailures.named(sparks));
    // Thrown by code of the input's (a user's function), not the plugin's.
    IllegalStateException users = new IllegalStateException("a user's failure");
    users.setStackTrace(new StackTraceElement[] {
        new StackTraceElement("java.util.Objects", "requireNonNull", "Objects.java", 1),
        new StackTraceElement("com.example.Job", "map", "Job.java", 1)});
    assertSame(users, SortFailures.named(users));
  }

  @Test
  void theCpuEnginesOwnFailureNamesOnlyTheReplacement() {
    EngineException cpu = new EngineException("cpu sort of 5 rows: cannot allocate");
    cpu.setStackTrace(new StackTraceElement[] {
        new StackTraceElement("io.gpusort.engine.cpu.Workspace", "allocate", "Workspace.java", 1)});
    String message = SortFailures.named(cpu).getMessage();
    assertTrue(message.contains(SQL_OFF) && !message.contains(ON_CPU), message);
    // The CPU engine's failure after a GPU engine's (the fallback's): both settings.
    cpu.addSuppressed(new EngineException("cuda: an illegal address"));
    message = SortFailures.named(cpu).getMessage();
    assertTrue(message.contains(SQL_OFF) && message.contains(ON_CPU), message);
  }

  /** What {@code sort} over a small input fails with, the plugin's sorts on. */
  private static Throwable failure(String name, Function<Dataset<Row>, Dataset<Row>> sort) {
    SparkSession spark = SparkTestSession.get();
    SparkTestSession.resetGpuSortConf();
    spark.conf().set(SparkTestSession.SQL_ENABLED, "true");
    if (name.endsWith("sort mode")) {
      spark.conf().set("spark.gpusort.global.mode", "sort");
    }
    Dataset<Row> input = spark.range(0, 2000, 1, 2).selectExpr("id % 97 AS k", "id");
    return assertThrows(Throwable.class, () -> sort.apply(input).collectAsList(),
        name + " did not fail");
  }

  private static <T extends Throwable> T cause(Throwable error, Class<T> type) {
    for (Throwable t = error; t != null; t = t.getCause()) {
      if (type.isInstance(t)) {
        return type.cast(t);
      }
    }
    return null;
  }

  private static String chain(Throwable error) {
    StringBuilder text = new StringBuilder();
    for (Throwable t = error; t != null; t = t.getCause()) {
      text.append(t).append('\n');
    }
    return text.toString();
  }

  private static SortExec sortExec(SparkPlan plan) {
    if (plan instanceof SortExec sort) {
      return sort;
    }
    if (plan instanceof AdaptiveSparkPlanExec adaptive) {
      return sortExec(adaptive.executedPlan());
    }
    for (SparkPlan child : ScalaCollections.asJava(plan.children())) {
      SortExec found = sortExec(child);
      if (found != null) {
        return found;
      }
    }
    return null;
  }
}
