package io.gpusort.examples;

import static io.gpusort.examples.StageMetrics.ENGINE_CALLS_METRIC;

import io.gpusort.examples.SortBenchmark.Case;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;

/**
 * The tables {@link SortBenchmark} prints after its runs: the cases' times, the GpuSort nodes'
 * stage times, the cases' tasks, and each timed run's median and slowest task.
 */
final class BenchmarkReport {
  /** Stages in pipeline order, for the stage table's columns; other stages follow by name. */
  private static final List<String> KNOWN_STAGE_ORDER = List.of("inputTime", "intakeTime",
      "gpuWaitTime", "toDeviceTime", "deviceSortTime", "gatherTime", "fromDeviceTime",
      "outputTime", "outputWaitTime", "sortTime");
  private static final int MIN_STAGE_COLUMN_WIDTH = 9;

  /** Per timed run: its tasks' median and longest run time and their GC time summed, seconds. */
  private static final int TASK_MEDIAN = 0;
  private static final int TASK_MAX = 1;
  private static final int TASK_GC = 2;
  private static final int TASK_SHUFFLE = 3;
  private static final int TASK_SPILL = 4;
  private static final int TASK_PEAK = 5;

  private BenchmarkReport() {}

  /**
   * One row per case: its median, fastest and slowest time over the timed repetitions, rows per
   * second at the median, its median against its baseline's and its floor's, its warm-up run
   * ({@code firstSeconds}) alone and against its median, and for GpuSort cases its warm-up
   * against its baseline's. A baseline or floor that did not run leaves its ratio empty.
   */
  static void printTable(List<Case> cases, double[][] seconds, double[] firstSeconds,
      long numRows, PrintStream out) {
    double[] medians = new double[cases.size()];
    for (int i = 0; i < cases.size(); i++) {
      medians[i] = ExampleRuntime.median(seconds[i]);
    }
    out.printf(Locale.ROOT, "%-36s %-7s %9s %9s %9s %9s %7s %9s %8s %9s %9s%n",
        "case", "engine", "median s", "min s", "max s", "Mrows/s", "ratio", "1st ratio",
        "x floor", "first s", "first/med");
    for (int i = 0; i < cases.size(); i++) {
      Case c = cases.get(i);
      int baseline = indexOf(cases, c.baseline());
      int floor = indexOf(cases, c.floor());
      double[] s = seconds[i];
      out.printf(Locale.ROOT, "%-36s %-7s %9.3f %9.3f %9.3f %9.2f %7s %9s %8s %9.3f %9.2f%n",
          c.name(), c.engine(), medians[i], Arrays.stream(s).min().orElse(0),
          Arrays.stream(s).max().orElse(0), numRows / medians[i] / 1e6,
          ratio(medians, i, baseline), c.gpuSort() ? ratio(firstSeconds, i, baseline) : "",
          ratio(medians, i, floor), firstSeconds[i], firstSeconds[i] / medians[i]);
    }
    out.println("ratio: median of the case / median of Spark's own sort of the same kind; "
        + "x floor: / median of the same rows hash-shuffled (global sorts) or scanned "
        + "(within partitions), with no sort, in the same run; first s: the case's warm-up run "
        + "(at the first size, its first run in this JVM); 1st ratio: a GpuSort case's first "
        + "run / its Spark sort's first run");
  }

  /** {@code values[i] / values[of]} to two places, or empty where {@code of} is not a case. */
  private static String ratio(double[] values, int i, int of) {
    return of < 0 ? "" : String.format(Locale.ROOT, "%.2f", values[i] / values[of]);
  }

  /**
   * One row per GpuSort case, one column per stage time any of its nodes reported, then the
   * engine calls; each cell the median over the timed repetitions, "-" where the case's node
   * has no such metric.
   */
  static void printStageTable(List<Case> cases,
      List<List<Map<String, Double>>> stageSamples, PrintStream out) {
    printStageTable("GpuSort stages", cases, stageSamples, out);
  }

  /** {@link #printStageTable(List, List, PrintStream)} under the heading {@code title}. */
  static void printStageTable(String title, List<Case> cases,
      List<List<Map<String, Double>>> stageSamples, PrintStream out) {
    List<String> stages = stageColumns(stageSamples);
    StringBuilder header = new StringBuilder(String.format(Locale.ROOT, "%n%-36s %-7s",
        title, "engine"));
    stages.forEach(stage -> header.append(' ').append(pad(stage, columnWidth(stage))));
    out.println(header.append(' ').append(pad("engine calls", 12)));
    for (int i = 0; i < cases.size(); i++) {
      Case c = cases.get(i);
      if (!c.gpuSort()) {
        continue;
      }
      List<Map<String, Double>> samples = stageSamples.get(i);
      StringBuilder row = new StringBuilder(String.format(Locale.ROOT, "%-36s %-7s", c.name(),
          c.engine()));
      if (samples.stream().allMatch(Map::isEmpty)) {
        out.println(row.append(" (no GpuSort node in the executed plan)"));
        continue;
      }
      for (String stage : stages) {
        row.append(' ').append(pad(medianCell(samples, stage, "%.3f"), columnWidth(stage)));
      }
      out.println(row.append(' ').append(pad(medianCell(samples, ENGINE_CALLS_METRIC, "%.0f"),
          12)));
    }
    out.println("stages: the GpuSort node's metrics whose keys end in \"Time\", in seconds of "
        + "task time summed over all tasks (and over the case's GpuSort nodes), not wall time; "
        + "engine calls: " + ENGINE_CALLS_METRIC + "; each the median over the timed "
        + "repetitions");
  }

  /**
   * One row per case: its tasks' median and longest run time and their GC time, each the median
   * over the timed repetitions: how much of a case's wall time its tasks take.
   */
  static void printTaskTable(List<Case> cases, double[][][] spans, PrintStream out) {
    printTaskTable("tasks", cases, spans, out);
  }

  /** {@link #printTaskTable(List, double[][][], PrintStream)} under the heading {@code title}. */
  static void printTaskTable(String title, List<Case> cases, double[][][] spans,
      PrintStream out) {
    out.println(String.format(Locale.ROOT, "%n%-36s %-7s %9s %9s %9s %11s %9s %12s", title,
        "engine", "median s", "max s", "GC s", "shuffle MB", "spill MB", "task peak MB"));
    for (int i = 0; i < cases.size(); i++) {
      double[][] runs = spans[i];
      out.println(String.format(Locale.ROOT, "%-36s %-7s %9.3f %9.3f %9.3f %11.1f %9.1f %12.1f",
          cases.get(i).name(), cases.get(i).engine(), medianOf(runs, TASK_MEDIAN),
          medianOf(runs, TASK_MAX), medianOf(runs, TASK_GC), medianOf(runs, TASK_SHUFFLE),
          medianOf(runs, TASK_SPILL), medianOf(runs, TASK_PEAK)));
    }
    out.println("tasks: launch to finish of each task of the case's jobs, median and longest; GC: "
        + "the tasks' JVM GC time summed; shuffle MB: the bytes they wrote to the shuffle "
        + "(compressed, as on disk); spill MB: the bytes they spilled to disk (a sort short of "
        + "execution memory); task peak MB: the largest peak execution memory of a task (what "
        + "Spark counted for it); each the median over the timed repetitions");
  }

  /** Per case and timed repetition, its median and its slowest task, as the listener saw them. */
  static void printSlowTasks(List<Case> cases, String[][] slowTasks, PrintStream out) {
    out.println(String.format(Locale.ROOT, "%n%-36s %s", "median task | slowest task",
        "launched after the first (s), run time, deserialization, the node's stage times"));
    for (int i = 0; i < cases.size(); i++) {
      for (String line : slowTasks[i]) {
        out.println(String.format(Locale.ROOT, "%-36s %s", cases.get(i).name(), line));
      }
    }
  }

  private static double medianOf(double[][] runs, int column) {
    double[] values = Arrays.stream(runs).mapToDouble(r -> r == null ? 0 : r[column]).sorted()
        .toArray();
    return values.length == 0 ? 0 : values[values.length / 2];
  }

  /** Every stage time in the samples: the known stages in pipeline order, then others by name. */
  private static List<String> stageColumns(List<List<Map<String, Double>>> stageSamples) {
    TreeSet<String> stages = new TreeSet<>();
    stageSamples.forEach(samples -> samples.forEach(sample -> stages.addAll(sample.keySet())));
    stages.remove(ENGINE_CALLS_METRIC);
    List<String> ordered = new ArrayList<>(stages);
    ordered.sort(Comparator.comparingInt(BenchmarkReport::knownStageRank));
    return ordered;
  }

  private static int knownStageRank(String stage) {
    int rank = KNOWN_STAGE_ORDER.indexOf(stage);
    return rank >= 0 ? rank : KNOWN_STAGE_ORDER.size();
  }

  private static int columnWidth(String stage) {
    return Math.max(MIN_STAGE_COLUMN_WIDTH, stage.length());
  }

  private static String pad(String text, int width) {
    return String.format(Locale.ROOT, "%" + width + "s", text);
  }

  /** The median of {@code key} over the samples that have it, in {@code format}; else "-". */
  private static String medianCell(List<Map<String, Double>> samples, String key, String format) {
    double[] values = samples.stream().filter(s -> s.containsKey(key))
        .mapToDouble(s -> s.get(key)).toArray();
    return values.length == 0 ? "-"
        : String.format(Locale.ROOT, format, ExampleRuntime.median(values));
  }

  /** The index of the case named {@code name}, or -1 (also for a null name). */
  static int indexOf(List<Case> cases, String name) {
    List<String> names = new ArrayList<>();
    cases.forEach(c -> names.add(c.name()));
    return name == null ? -1 : names.indexOf(name);
  }
}
