package io.gpusort.examples;

import io.gpusort.examples.SortBenchmark.Case;
import java.io.PrintStream;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.spark.sql.SparkSession;

/**
 * {@link SortBenchmark}'s cases at each size of {@code --rows}, in order, in one JVM: each size's
 * input generated, its tables printed and the input released before the next; then how each
 * case's median grew from size to size, beside its Spark baseline's.
 */
final class SizeSeries {
  /** Sizes are written as {@code 2.5e8} when they have at most this many significant digits. */
  private static final int MAX_COMPACT_DIGITS = 3;

  /** The cases run at one size and their medians, in seconds. */
  record SizeResult(long numRows, List<Case> cases, double[] medians) {
    /** The median of the case named {@code name}, or NaN where it did not run at this size. */
    double median(String name) {
      int i = BenchmarkReport.indexOf(cases, name);
      return i < 0 ? Double.NaN : medians[i];
    }
  }

  private SizeSeries() {}

  static void run(SortBenchmark benchmark, SparkSession spark, int numPartitions,
      PrintStream out) {
    SortBenchmarkArgs args = benchmark.args();
    List<SizeResult> results = new ArrayList<>();
    for (int s = 0; s < args.rows().size(); s++) {
      long numRows = args.rows().get(s);
      if (s > 0) {
        out.printf(Locale.ROOT, "%n=== size %d of %d: %s rows ===%n", s + 1, args.rows().size(),
            compact(numRows));
      }
      results.add(benchmark.runSize(spark, numPartitions, numRows,
          numRows <= args.baselineMaxRows(), out));
    }
    if (results.size() > 1) {
      printGrowth(results, out);
    }
  }

  /**
   * One row per case that ran at any size: its median at each size, then for each size after the
   * first the growth of its median from the size before, and for GpuSort cases beside it the
   * growth of its Spark baseline's; "-" where a case did not run at a size.
   */
  static void printGrowth(List<SizeResult> results, PrintStream out) {
    Map<String, Case> cases = new LinkedHashMap<>();
    results.forEach(r -> r.cases().forEach(c -> cases.putIfAbsent(c.name(), c)));
    StringBuilder header = new StringBuilder(String.format(Locale.ROOT, "%n%-36s %-7s",
        "growth with size", "engine"));
    for (SizeResult r : results) {
      header.append(String.format(Locale.ROOT, " %9s", compact(r.numRows()) + " s"));
    }
    List<String> pairs = new ArrayList<>();
    for (int s = 1; s < results.size(); s++) {
      long now = results.get(s).numRows();
      long before = results.get(s - 1).numRows();
      pairs.add(String.format(Locale.ROOT, "%s/%s x%.2f", compact(now), compact(before),
          (double) now / before));
    }
    pairs.forEach(pair -> header.append(String.format(Locale.ROOT, " | %s %8s", pair,
        "baseline")));
    out.println(header);
    for (Case c : cases.values()) {
      StringBuilder row = new StringBuilder(String.format(Locale.ROOT, "%-36s %-7s", c.name(),
          c.engine()));
      for (SizeResult r : results) {
        row.append(String.format(Locale.ROOT, " %9s", number(r.median(c.name()), 3)));
      }
      for (int s = 1; s < results.size(); s++) {
        SizeResult now = results.get(s);
        SizeResult before = results.get(s - 1);
        row.append(String.format(Locale.ROOT, " | %" + pairs.get(s - 1).length() + "s",
            number(now.median(c.name()) / before.median(c.name()), 2)));
        String baseline = !c.gpuSort() || c.baseline() == null ? ""
            : number(now.median(c.baseline()) / before.median(c.baseline()), 2);
        row.append(String.format(Locale.ROOT, " %8s", baseline));
      }
      out.println(row);
    }
    out.println("growth: a case's median at a size / its median at the size before, under the "
        + "two sizes and their row count ratio; baseline: the same for the Spark sort a GpuSort "
        + "case's ratio is taken against (sortWithinPartitions for withinPartitions, orderBy for "
        + "byKey and SQL ORDER BY, read-orderBy-write for the file jobs)");
  }

  /** {@code value} to {@code decimals} places, or "-" for NaN (a case that did not run). */
  private static String number(double value, int decimals) {
    return Double.isNaN(value) ? "-" : String.format(Locale.ROOT, "%." + decimals + "f", value);
  }

  /** {@code numRows} as {@code 2e5} or {@code 2.5e8} where that is short, else with commas. */
  static String compact(long numRows) {
    BigDecimal n = new BigDecimal(numRows).stripTrailingZeros();
    int exponent = n.precision() - n.scale() - 1;
    if (numRows < 1000 || n.precision() > MAX_COMPACT_DIGITS) {
      return String.format(Locale.ROOT, "%,d", numRows);
    }
    return n.movePointLeft(exponent).toPlainString() + "e" + exponent;
  }
}
