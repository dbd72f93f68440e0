package io.gpusort.sql.diff;

import io.gpusort.sql.SparkTestSession;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;

/**
 * One trial, everything drawn from its seed: a source (local rows, the in-memory cache, Parquet,
 * ORC), a schema and rows, settings, and a query shape; the query runs with the replacement off
 * and on, and the outcomes are compared ({@link DiffCompare}).
 */
final class DiffTrial {
  /** Where the table {@code t} comes from. */
  enum Source { LOCAL, CACHED, PARQUET, ORC }

  /** What one trial did. {@code difference} is null when the outcomes agree. */
  record Result(long seed, DiffShape shape, Source source, String replay, String difference,
      String bothFailedWith, DiffPlans.SortNodes on, DiffPlans.SortNodes off, long timeNanos) {}

  private static final int[] SMALL_SIZES = {0, 1, 1, 2, 3, 5};

  private DiffTrial() {}

  static Result run(SparkSession spark, long seed) {
    long start = System.nanoTime();
    SplittableRandom random = new SplittableRandom(seed);
    DiffShape shape = DiffShape.values()[random.nextInt(DiffShape.values().length)];
    Source source = DiffValues.pick(random, Source.LOCAL, Source.LOCAL, Source.CACHED,
        Source.PARQUET, Source.PARQUET, Source.ORC);
    boolean files = source == Source.PARQUET || source == Source.ORC;
    DiffSchema schema = DiffSchema.random(random, files);
    int rows = random.nextInt(5) == 0 ? SMALL_SIZES[random.nextInt(SMALL_SIZES.length)]
        : 10 + random.nextInt(190);
    int partitions = 1 + random.nextInt(4);
    List<Row> left = schema.rows(random, rows);
    List<Row> right = schema.rows(random, random.nextInt(60));
    int skewColumn = random.nextInt(schema.size());
    if (random.nextBoolean()) {
      Object value = DiffValues.value(schema.type(skewColumn), random);
      left = skew(left, skewColumn, value, random);
      right = skew(right, skewColumn, value, random);
    }
    DiffSettings settings = DiffSettings.random(random);
    DiffQuery query = DiffQueries.generate(shape, schema, skewColumn, random);
    String replay = "seed " + seed + ": " + shape + " from " + source + " (" + rows + " rows, "
        + partitions + " partitions; u " + right.size() + " rows)\n    schema: "
        + schema.describe() + "\n    settings: " + settings.describe() + "\n    query: "
        + query.text();

    Path dir = null;
    Dataset<Row> cached = null;
    settings.apply(spark);
    try {
      Dataset<Row> local = spark.createDataFrame(left, schema.schema);
      Dataset<Row> table = switch (source) {
        case LOCAL -> random.nextBoolean() ? local : local.repartition(partitions);
        case CACHED -> cached = local.repartition(partitions).cache();
        case PARQUET, ORC -> {
          dir = Files.createTempDirectory("gpusort-diff-");
          String format = source == Source.PARQUET ? "parquet" : "orc";
          local.repartition(partitions).write().format(format).mode("overwrite")
              .save(dir.toString());
          yield spark.read().format(format).load(dir.toString());
        }
      };
      if (cached != null) {
        cached.count();
      }
      table.createOrReplaceTempView("t");
      spark.createDataFrame(right, schema.schema).createOrReplaceTempView("u");

      DiffCompare.Outcome offOutcome = runSide(spark, query, false);
      DiffPlans.SortNodes offNodes = lastNodes;
      DiffCompare.Outcome onOutcome = runSide(spark, query, true);
      DiffPlans.SortNodes onNodes = lastNodes;
      String difference;
      try {
        difference = DiffCompare.difference(query, offOutcome, onOutcome);
      } catch (RuntimeException e) {
        difference = "comparison failed: " + e;
      }
      String bothFailed = offOutcome.error() != null && difference == null
          ? DiffCompare.firstLine(DiffCompare.rootCause(offOutcome.error())) : null;
      return new Result(seed, shape, source, replay, difference, bothFailed, onNodes, offNodes,
          System.nanoTime() - start);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } finally {
      settings.restore(spark);
      if (cached != null) {
        cached.unpersist(true);
      }
      spark.catalog().dropTempView("t");
      spark.catalog().dropTempView("u");
      delete(dir);
    }
  }

  /** The sort nodes of the plan {@link #runSide} ran last (null when it was never planned). */
  private static DiffPlans.SortNodes lastNodes;

  private static DiffCompare.Outcome runSide(SparkSession spark, DiffQuery query, boolean on) {
    spark.conf().set(SparkTestSession.SQL_ENABLED, Boolean.toString(on));
    lastNodes = new DiffPlans.SortNodes(0, 0);
    Dataset<Row> ds = null;
    try {
      ds = (on ? query.on() : query.off()).apply(spark);
      List<List<Row>> partitions = query.shape().perPartition()
          ? ds.javaRDD().glom().collect() : List.of(ds.collectAsList());
      lastNodes = DiffPlans.count(ds.queryExecution().executedPlan());
      return new DiffCompare.Outcome(partitions, null);
    } catch (Exception e) {
      if (ds != null) {
        try {
          lastNodes = DiffPlans.count(ds.queryExecution().executedPlan());
        } catch (RuntimeException planning) {
          // The error came from planning: no plan to count.
        }
      }
      return new DiffCompare.Outcome(null, e);
    }
  }

  /** The rows with about 40% of them holding {@code value} in {@code column}. */
  private static List<Row> skew(List<Row> rows, int column, Object value,
      SplittableRandom random) {
    List<Row> skewed = new ArrayList<>(rows.size());
    for (Row row : rows) {
      if (random.nextInt(5) < 2) {
        Object[] values = new Object[row.size()];
        for (int i = 0; i < values.length; i++) {
          values[i] = row.get(i);
        }
        values[column] = value;
        skewed.add(RowFactory.create(values));
      } else {
        skewed.add(row);
      }
    }
    return skewed;
  }

  private static void delete(Path dir) {
    if (dir == null) {
      return;
    }
    try (Stream<Path> paths = Files.walk(dir)) {
      paths.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
    } catch (IOException e) {
      // A temporary directory left behind is harmless.
    }
  }
}
