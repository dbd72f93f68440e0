package io.gpusort.examples;

import static io.gpusort.examples.SortBenchmark.KEY;

import io.gpusort.GpuSort;
import io.gpusort.config.GpuSortConf;
import io.gpusort.examples.SortBenchmark.Case;
import io.gpusort.examples.SortBenchmark.Input;
import io.gpusort.examples.SortBenchmark.KeyShape;
import io.gpusort.examples.SortBenchmark.PreparedInput;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * {@link SortBenchmark}'s busy session ({@code --session busy}): one session that interleaves
 * inputs and shapes, as a shared application would, against each case run alone in a JVM of its
 * own ({@link AloneRuns}). Every input is generated before any case runs; then one warm-up round
 * and {@code --reps} timed rounds, each running every case once in an order that alternates
 * inputs and shapes.
 */
final class BusySession {
  /** The inputs of the session. */
  enum Source {
    CACHED_LONG("cached long", KeyShape.LONG, Input.CACHED),
    PARQUET_LONG("Parquet long", KeyShape.LONG, Input.PARQUET),
    CACHED_STRING("cached string", KeyShape.STRING, Input.CACHED);

    private final String label;
    private final KeyShape shape;
    private final Input input;

    Source(String label, KeyShape shape, Input input) {
      this.label = label;
      this.shape = shape;
      this.input = input;
    }

    /** {@code --string-rows} for string keys, else {@code --rows}. */
    long numRows(SortBenchmarkArgs args) {
      return shape == KeyShape.STRING ? args.stringRows() : args.rows().get(0);
    }

    /** This input generated and cached, or written to Parquet; closing releases it. */
    PreparedInput prepare(SortBenchmark benchmark, SparkSession spark, int numPartitions,
        String parquetDir) {
      SortBenchmarkArgs args = benchmark.args();
      return benchmark.prepare(spark, shape.generate(spark, numRows(args), numPartitions), input,
          parquetDir);
    }

    String describe(SortBenchmarkArgs args) {
      return String.format(Locale.ROOT, "%s: %,d rows, %s", label, numRows(args),
          shape.description());
    }
  }

  /** One shape on one input, labelled {@code "input: shape"}. */
  record BusyCase(String label, Source source, Case shape) {}

  /** What the runs of some cases measured: warm-up and timed seconds, and the host arena. */
  record Runs(double[] firstSeconds, double[][] seconds, ArenaReport arena) {
    double median(int i) {
      return ExampleRuntime.median(seconds[i]);
    }
  }

  private final SortBenchmark benchmark;
  private final SparkSession spark;
  private final int numPartitions;

  BusySession(SortBenchmark benchmark, SparkSession spark, int numPartitions) {
    this.benchmark = benchmark;
    this.spark = spark;
    this.numPartitions = numPartitions;
  }

  /**
   * Every input and shape, in the order of a round: input {@code k % 3} with shape
   * {@code (k % 3 + k / 3) % 3}, so that neither the input nor the shape repeats from one case to
   * the next and each input meets each shape once.
   */
  static List<BusyCase> cases(String engine) {
    List<Case> shapes = List.of(
        new Case("GpuSort.withinPartitions", engine, true, null, null, Map.of(),
            ds -> ds.transform(GpuSort.<Row>withinPartitions(KEY))),
        new Case("GpuSort.byKey", engine, true, null, null, Map.of(),
            ds -> ds.transform(GpuSort.<Row>byKey(KEY))),
        // Spark's plan, its sort replaced by the plugin's, as in SortBenchmark's SQL case.
        new Case(SortBenchmark.SQL_CASE, engine, true, null, null,
            Map.of(GpuSortConf.SQL_ENABLED.key(), "true"), ds -> ds.orderBy(KEY)));
    Source[] sources = Source.values();
    int n = sources.length;
    List<BusyCase> cases = new ArrayList<>();
    for (int k = 0; k < n * shapes.size(); k++) {
      Source source = sources[k % n];
      Case shape = shapes.get((k % n + k / n) % shapes.size());
      cases.add(new BusyCase(source.label + ": " + shape.name(), source, shape));
    }
    return cases;
  }

  void run(PrintStream out) {
    SortBenchmarkArgs args = benchmark.args();
    List<BusyCase> cases = cases(FileSort.engineUsed(spark));
    Map<Source, PreparedInput> inputs = new EnumMap<>(Source.class);
    Runs runs;
    try {
      for (Source source : Source.values()) {
        inputs.put(source, source.prepare(benchmark, spark, numPartitions, args.parquetDir()));
      }
      printHeader(cases, inputs, out);
      Map<Source, Dataset<Row>> rows = new EnumMap<>(Source.class);
      inputs.forEach((source, input) -> rows.put(source, input.rows()));
      runs = time(benchmark, spark, cases, rows, args.reps());
    } finally {
      inputs.values().forEach(PreparedInput::close);
    }
    printTable(cases, runs, args, out);
    runs.arena().print(labels(cases), out);
    if (args.aloneJvms()) {
      List<AloneRuns.Result> alone = AloneRuns.launchAll(cases, spark, numPartitions, args, out);
      AloneRuns.printComparison(cases, runs, alone, out);
    }
  }

  private void printHeader(List<BusyCase> cases, Map<Source, PreparedInput> inputs,
      PrintStream out) {
    SortBenchmarkArgs args = benchmark.args();
    out.printf(Locale.ROOT, "SortBenchmark busy session: %d cases (%d inputs, 3 shapes) in one "
        + "session, %d partitions, master %s, %d rounds after 1 warm-up round%n", cases.size(),
        inputs.size(), numPartitions, spark.sparkContext().master(), args.reps());
    args.settings().forEach((key, value) ->
        out.printf(Locale.ROOT, "  --conf %s=%s%n", key, value));
    inputs.forEach((source, input) -> out.printf(Locale.ROOT, "  %s; %s%n",
        source.describe(args), input.description()));
    out.println("  a round: " + String.join(" | ", labels(cases))
        + " (each timed round starts one case later)");
    ArenaReport.printState(spark, out);
  }

  /**
   * One warm-up round of {@code cases} in their order, then {@code reps} timed rounds, each
   * starting one case later than the round before so that drift spreads over every case.
   */
  static Runs time(SortBenchmark benchmark, SparkSession spark, List<BusyCase> cases,
      Map<Source, Dataset<Row>> rows, int reps) {
    return time(benchmark, spark, cases, rows, reps, 0);
  }

  /**
   * As {@link #time(SortBenchmark, SparkSession, List, Map, int)}, with {@code moreWarmups}
   * untimed rounds after the first (whose runs are the ones reported as first).
   */
  static Runs time(SortBenchmark benchmark, SparkSession spark, List<BusyCase> cases,
      Map<Source, Dataset<Row>> rows, int reps, int moreWarmups) {
    int n = cases.size();
    double[] firstSeconds = new double[n];
    double[][] seconds = new double[n][reps];
    ArenaReport arena = new ArenaReport(n);
    for (int i = 0; i < n; i++) {
      firstSeconds[i] = runOnce(benchmark, spark, cases.get(i), rows, arena, i, "first");
    }
    for (int round = 0; round < moreWarmups; round++) {
      for (int i = 0; i < n; i++) {
        String run = "warm-up " + (round + 2);
        DiskSettle.beforeRun(cases.get(i).label() + " | " + run);
        runWithWindow(benchmark, spark, cases.get(i), rows, run);
      }
    }
    for (int rep = 0; rep < reps; rep++) {
      for (int k = 0; k < n; k++) {
        int i = (k + rep) % n;
        seconds[i][rep] = runOnce(benchmark, spark, cases.get(i), rows, arena, i,
            "rep " + (rep + 1));
      }
    }
    return new Runs(firstSeconds, seconds, arena);
  }

  /**
   * Runs {@code c} once as run {@code run} ("first": its warm-up, reported as its first run; "rep
   * N": a timed one), prints its window and adds its arena figures; returns its seconds.
   */
  private static double runOnce(SortBenchmark benchmark, SparkSession spark, BusyCase c,
      Map<Source, Dataset<Row>> rows, ArenaReport arena, int index, String run) {
    boolean warmUp = run.equals("first");
    DiskSettle.beforeRun(c.label() + (warmUp ? " | first" : ""));
    ArenaReport.Mark before = ArenaReport.Mark.now();
    double seconds = runWithWindow(benchmark, spark, c, rows, run);
    arena.add(index, warmUp, before);
    return seconds;
  }

  /** Runs {@code c} once as run {@code run} and prints its window; returns its seconds. */
  private static double runWithWindow(SortBenchmark benchmark, SparkSession spark, BusyCase c,
      Map<Source, Dataset<Row>> rows, String run) {
    long from = System.currentTimeMillis();
    double seconds = benchmark.timeSeconds(spark, c.shape(), rows.get(c.source()), false);
    SortBenchmark.printRunWindow(c.label(), run, from);
    return seconds;
  }

  private static void printTable(List<BusyCase> cases, Runs runs, SortBenchmarkArgs args,
      PrintStream out) {
    out.printf(Locale.ROOT, "%n%-40s %-7s %12s %9s %9s %9s %9s %9s %9s%n", "busy session",
        "engine", "rows", "median s", "min s", "max s", "Mrows/s", "first s", "first/med");
    for (int i = 0; i < cases.size(); i++) {
      BusyCase c = cases.get(i);
      double median = runs.median(i);
      double[] s = runs.seconds()[i];
      long numRows = c.source().numRows(args);
      out.printf(Locale.ROOT, "%-40s %-7s %,12d %9.3f %9.3f %9.3f %9.2f %9.3f %9.2f%n",
          c.label(), c.shape().engine(), numRows, median, Arrays.stream(s).min().orElse(0),
          Arrays.stream(s).max().orElse(0), numRows / median / 1e6, runs.firstSeconds()[i],
          runs.firstSeconds()[i] / median);
    }
    out.println("median, min, max: over the timed rounds; first s: the case's warm-up run, its "
        + "first run in this JVM");
  }

  static List<String> labels(List<BusyCase> cases) {
    return cases.stream().map(BusyCase::label).toList();
  }
}
