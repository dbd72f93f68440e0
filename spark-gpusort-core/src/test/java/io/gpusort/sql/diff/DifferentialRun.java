package io.gpusort.sql.diff;

import io.gpusort.sql.SparkTestSession;
import java.util.SplittableRandom;
import org.apache.spark.sql.SparkSession;

/**
 * Runs the differential trials of one seed range in this JVM and prints the report: trials, time
 * per trial, per shape the share that ran on the plugin's operators, every difference with its
 * replay. Trial {@code i} has seed {@code S + i}, so a range splits over JVMs or hosts, and one
 * difference replays alone with {@code -Dgpusort.diff.seed=<its seed> -Dgpusort.diff.trials=1}.
 *
 * <p>Properties: {@code gpusort.diff.seed} (decimal or 0x hex; default random),
 * {@code gpusort.diff.trials} (default {@value #DEFAULT_TRIALS}), {@code gpusort.diff.verbose}
 * (print every trial's replay line). Run it on the module's test classpath (target/classes,
 * target/test-classes and the dependencies), or run {@code SqlDifferentialTest} with the same
 * properties; the exit status is 1 when a trial differs.
 */
public final class DifferentialRun {
  /** Trials a CI run does: a couple of minutes on two cores with the CPU engine. */
  static final int DEFAULT_TRIALS = 200;

  private DifferentialRun() {}

  /** The first seed of the range, from {@code -Dgpusort.diff.seed}, else a random one. */
  static long baseSeed() {
    String property = System.getProperty("gpusort.diff.seed");
    if (property != null && !property.isBlank()) {
      return Long.decode(property.trim());
    }
    return new SplittableRandom().nextLong() >>> 16;
  }

  static int trials() {
    return Integer.getInteger("gpusort.diff.trials", DEFAULT_TRIALS);
  }

  /** Runs trials {@code seed .. seed + trials - 1} and returns what they covered. */
  static DiffCoverage run(SparkSession spark, long seed, int trials) {
    boolean verbose = Boolean.getBoolean("gpusort.diff.verbose");
    DiffCoverage coverage = new DiffCoverage();
    for (int i = 0; i < trials; i++) {
      DiffTrial.Result result = DiffTrial.run(spark, seed + i);
      coverage.add(result);
      if (verbose || result.difference() != null) {
        System.out.println((result.difference() != null ? "DIFFERENCE " + result.difference()
            + "\n  " : "") + result.replay() + "\n    plugin nodes on: " + result.on().plugin()
            + ", spark sorts on: " + result.on().spark() + ", "
            + result.timeNanos() / 1_000_000 + " ms");
      }
    }
    return coverage;
  }

  public static void main(String[] args) {
    long seed = baseSeed();
    int trials = trials();
    SparkSession spark = SparkTestSession.get();
    SparkTestSession.resetGpuSortConf();
    long start = System.nanoTime();
    DiffCoverage coverage = run(spark, seed, trials);
    System.out.println("differential run: engine " + io.gpusort.GpuSort.engineName(spark)
        + ", seeds " + seed + " .. " + (seed + trials - 1) + ", "
        + (System.nanoTime() - start) / 1_000_000 + " ms");
    System.out.print(coverage.report());
    System.exit(coverage.differences().isEmpty() ? 0 : 1);
  }
}
