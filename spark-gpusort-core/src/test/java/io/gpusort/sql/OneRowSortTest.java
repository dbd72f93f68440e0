package io.gpusort.sql;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.expr;
import static org.apache.spark.sql.functions.lit;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpusort.GpuSort;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.SparkArithmeticException;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code GpuSort.byKey} / {@code withinPartitions} sort where Spark's {@code orderBy} /
 * {@code sortWithinPartitions} sort, and nowhere else (issue 36): where Spark's optimizer removes
 * the sort (one row at most, constant keys, a sort above it), the keys are not evaluated, so a key
 * that throws under ANSI fails neither query. Where the sort stays, the error is Spark's in both.
 */
class OneRowSortTest {
  private static final Column THROWS = expr("1 / (c - c)");

  private SparkSession spark;

  @BeforeEach
  void ansi() {
    spark = SparkTestSession.get();
    spark.conf().set("spark.sql.ansi.enabled", "true");
  }

  @AfterEach
  void reset() {
    spark.conf().unset("spark.sql.ansi.enabled");
  }

  private Dataset<Row> rows(long... values) {
    List<Row> rows = new ArrayList<>();
    for (long v : values) {
      rows.add(RowFactory.create(v));
    }
    return spark.createDataFrame(rows, new StructType().add("c", DataTypes.LongType));
  }

  @Test
  void oneRowIsNotSortedSoItsKeyIsNotEvaluated() {
    Dataset<Row> one = rows(5L);
    assertEquals(one.orderBy(THROWS).collectAsList(),
        one.transform(GpuSort.byKey(THROWS)).collectAsList());
    assertEquals(one.sortWithinPartitions(THROWS).collectAsList(),
        one.transform(GpuSort.withinPartitions(THROWS)).collectAsList());
    assertEquals(List.of(RowFactory.create(5L)),
        one.transform(GpuSort.byKey(THROWS)).collectAsList());
    // The same through a limit of one row over more rows
    Dataset<Row> limited = rows(3L, 1L, 2L).limit(1);
    assertEquals(limited.orderBy(THROWS).collectAsList(),
        limited.transform(GpuSort.byKey(THROWS)).collectAsList());
  }

  @Test
  void aSortUnderAnotherSortGoesAsSparksDoes() {
    Dataset<Row> three = rows(3L, 1L, 2L);
    List<Row> expected = three.orderBy(THROWS).orderBy(col("c")).collectAsList();
    assertEquals(expected,
        three.transform(GpuSort.byKey(THROWS)).orderBy(col("c")).collectAsList());
    assertEquals(expected, three.transform(GpuSort.withinPartitions(THROWS))
        .transform(GpuSort.byKey(col("c"))).collectAsList());
    assertEquals(List.of(RowFactory.create(1L), RowFactory.create(2L), RowFactory.create(3L)),
        expected);
  }

  @Test
  void constantKeysAreNotSortedOn() {
    Dataset<Row> three = rows(3L, 1L, 2L);
    assertEquals(three.orderBy(lit("x"), col("c").desc()).collectAsList(),
        three.transform(GpuSort.byKey(lit("x"), col("c").desc())).collectAsList());
    assertEquals(three.orderBy(lit("x")).count(), three.transform(GpuSort.byKey(lit("x"))).count());
    // A constant that throws fails in Spark's constant folding, for both alike
    Column throwing = expr("1 / 0");
    assertThrows(SparkArithmeticException.class,
        () -> three.orderBy(throwing, col("c")).collectAsList());
    assertThrows(SparkArithmeticException.class,
        () -> three.transform(GpuSort.byKey(throwing, col("c"))).collectAsList());
  }

  @Test
  void aSortThatStaysFailsAsSparksDoes() {
    Dataset<Row> three = rows(3L, 1L, 2L);
    assertThrows(SparkArithmeticException.class, () -> three.orderBy(THROWS).collectAsList());
    SparkArithmeticException ours = assertThrows(SparkArithmeticException.class,
        () -> three.transform(GpuSort.byKey(THROWS)).collectAsList());
    assertTrue(ours.getMessage().contains("DIVIDE_BY_ZERO"), ours.getMessage());
  }

  @Test
  void anEmptyFileKeepsSparksPartitionsUnderAdaptiveExecution(@TempDir Path dir) {
    // Differential seed 3601082: the tagged sort alone let adaptive execution drop the user's
    // repartition of an empty input (0 partitions against Spark's 1)
    String adaptive = spark.conf().get("spark.sql.adaptive.enabled");
    spark.conf().set("spark.sql.adaptive.enabled", "true");
    try {
      rows().write().parquet(dir.resolve("empty").toString());
      Dataset<Row> base =
          spark.read().parquet(dir.resolve("empty").toString()).repartition(col("c"));
      Dataset<Row> off = base.sortWithinPartitions(col("c").desc());
      Dataset<Row> on = base.transform(GpuSort.withinPartitions(col("c").desc()));
      assertEquals(off.collectAsList(), on.collectAsList());
      assertEquals(off.javaRDD().glom().collect().size(), on.javaRDD().glom().collect().size());
    } finally {
      spark.conf().set("spark.sql.adaptive.enabled", adaptive);
    }
  }

  /**
   * Differential seed 3601726: an empty cached input under the user's repartition, with the sort
   * within partitions at the query's top, gave 0 partitions against Spark's 1. Adaptive execution
   * keeps the repartition's clustering only under its own local sort; the node now asks for it.
   * With rows, the plan has no shuffle more than Spark's.
   */
  @Test
  void anEmptyCacheUnderARepartitionKeepsSparksPartitions() {
    String adaptive = spark.conf().get("spark.sql.adaptive.enabled");
    spark.conf().set("spark.sql.adaptive.enabled", "true");
    Dataset<Row> empty = rows().selectExpr("c", "c * 2 AS d").cache();
    Dataset<Row> some = rows(3L, 1L, 2L, 7L).selectExpr("c", "c * 2 AS d").cache();
    try {
      for (Dataset<Row> input : List.of(empty, some)) {
        input.count();
        List<Dataset<Row>> bases = List.of(input.repartition(col("c")),
            input.repartition(3, col("c")), input.repartition(col("c")).filter("d >= 0"),
            input.repartition(col("c")).select("d", "c"));
        for (Dataset<Row> base : bases) {
          Dataset<Row> off = base.sortWithinPartitions(col("d").desc());
          Dataset<Row> on = base.transform(GpuSort.withinPartitions(col("d").desc()));
          List<List<Row>> offParts = off.javaRDD().glom().collect();
          List<List<Row>> onParts = on.javaRDD().glom().collect();
          assertEquals(offParts, onParts, base.queryExecution().analyzed().toString());
          assertEquals(off.collectAsList(), on.collectAsList());
          String plan = on.queryExecution().executedPlan().toString();
          assertEquals(shuffles(off.queryExecution().executedPlan().toString()), shuffles(plan),
              plan);
        }
      }
    } finally {
      empty.unpersist();
      some.unpersist();
      spark.conf().set("spark.sql.adaptive.enabled", adaptive);
    }
  }

  private static int shuffles(String plan) {
    return plan.split("Exchange hashpartitioning", -1).length - 1;
  }

  @Test
  void theSortThatStaysRunsOnTheEngine() {
    Dataset<Row> sorted = rows(3L, 1L, 2L).transform(GpuSort.byKey(col("c").desc()));
    String plan = sorted.queryExecution().executedPlan().toString();
    assertTrue(plan.contains("GpuSort") || plan.contains("GpuRangeSort"), plan);
    assertEquals(List.of(RowFactory.create(3L), RowFactory.create(2L), RowFactory.create(1L)),
        sorted.collectAsList());
  }
}
