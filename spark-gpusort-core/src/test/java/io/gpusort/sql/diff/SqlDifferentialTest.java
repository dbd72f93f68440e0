package io.gpusort.sql.diff;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpusort.sql.SparkTestSession;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The differential suite in CI (issue 36): random schemas and query shapes, each run with the
 * replacement off and on, compared exactly (ties as multisets, errors by class). Fails listing
 * every differing seed with its replay; prints the coverage report (the share of each shape that
 * ran on the plugin's operators) either way. {@code -Dgpusort.diff.trials} and
 * {@code -Dgpusort.diff.seed} choose the range; {@link DifferentialRun} runs the same as a
 * program.
 */
class SqlDifferentialTest {
  @AfterEach
  void reset() {
    SparkTestSession.resetGpuSortConf();
  }

  @Test
  void pluginMatchesSparkOnRandomQueries() {
    SparkSession spark = SparkTestSession.get();
    long seed = DifferentialRun.baseSeed();
    int trials = DifferentialRun.trials();
    DiffCoverage coverage = DifferentialRun.run(spark, seed, trials);
    String report = coverage.report();
    System.out.println("differential suite, seeds " + seed + " .. " + (seed + trials - 1)
        + ":\n" + report);
    assertTrue(coverage.differences().isEmpty(), coverage.differences().size()
        + " of " + trials + " trials differ (seeds " + seed + " .. " + (seed + trials - 1)
        + "; rerun one with -Dgpusort.diff.seed=<seed> -Dgpusort.diff.trials=1):\n" + report);
  }
}
