package io.gpusort.examples;

import io.gpusort.GpuSort;
import io.gpusort.config.GpuSortConf;
import io.gpusort.examples.BusySession.BusyCase;
import io.gpusort.examples.BusySession.Source;
import io.gpusort.examples.SortBenchmark.PreparedInput;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.apache.spark.sql.SparkSession;

/**
 * Each case of the busy session alone in a JVM of its own: the parent starts a child JVM per
 * case ({@code SortBenchmark --session alone --alone-case LABEL} with the same options, the same
 * java binary, class path, heap and system properties) that generates only that case's input,
 * runs it alone and prints one line, {@code ALONE\t<label>\t<median ms>\t<first ms>}; the parent
 * compares it with the case's median in the busy session.
 */
final class AloneRuns {
  /** The first field of the child's result line. */
  static final String LINE_TAG = "ALONE";
  /** A busy median within this fraction of the alone one counts as the same. */
  private static final double SAME_WITHIN = 0.15;
  /** Stands for the class path where the child's command is printed. */
  private static final String CLASS_PATH_MARK = "@CLASSPATH@";
  /** Put before each line the child prints, which the parent passes on. */
  private static final String CHILD_PREFIX = "  alone| ";
  /** JVM options that would attach a debugger, an agent or a recording to every child. */
  private static final List<String> SKIPPED_JVM_OPTIONS = List.of("-agentlib", "-agentpath",
      "-XX:StartFlightRecording", "-Xrunjdwp");
  /**
   * System properties of this process only (spark-submit passes its settings to the driver as
   * system properties); the master is passed as {@code --master}.
   */
  private static final Set<String> PER_PROCESS_PROPERTIES = Set.of("spark.master",
      "spark.app.id", "spark.driver.host", "spark.driver.port");

  /** A case's figures from its child JVM, or why there are none. */
  record Result(String label, double medianSeconds, double firstSeconds, String failure) {}

  private AloneRuns() {}

  /**
   * {@code --session alone}: generates only the input of {@code --alone-case}, runs {@code
   * --alone-warmups} warm-ups (the first is its first run) and {@code --reps} timed runs of it,
   * and prints the {@value #LINE_TAG} line. In the busy session the same code has run for the
   * other cases before a case's timed runs: with one warm-up, a case alone is timed before its
   * JVM has settled (2026-12-06, H100: four of five cases 26-36% faster busy than alone).
   *
   * @throws FileSortArgs.UsageException if no case of the busy session has that label
   */
  static void runAlone(SortBenchmark benchmark, SparkSession spark, int numPartitions,
      PrintStream out) {
    SortBenchmarkArgs args = benchmark.args();
    List<BusyCase> cases = BusySession.cases(FileSort.engineUsed(spark));
    BusyCase c = cases.stream().filter(bc -> bc.label().equals(args.aloneCase())).findFirst()
        .orElseThrow(() -> new FileSortArgs.UsageException("--alone-case '" + args.aloneCase()
            + "' is no case of the busy session; its cases are: "
            + String.join("; ", BusySession.labels(cases))));
    Source source = c.source();
    try (PreparedInput input = source.prepare(benchmark, spark, numPartitions,
        args.parquetDir())) {
      out.printf(Locale.ROOT, "%s, alone in this JVM: %s; %d partitions, master %s, %d "
          + "repetitions after %d warm-ups%n", c.label(), source.describe(args), numPartitions,
          spark.sparkContext().master(), args.reps(), args.aloneWarmups());
      args.settings().forEach((key, value) ->
          out.printf(Locale.ROOT, "  --conf %s=%s%n", key, value));
      ArenaReport.printState(spark, out);
      BusySession.Runs runs = BusySession.time(benchmark, spark, List.of(c),
          Map.of(source, input.rows()), args.reps(), args.aloneWarmups() - 1);
      out.println("  " + runs.arena().summary(0));
      out.printf(Locale.ROOT, "%s\t%s\t%.3f\t%.3f%n", LINE_TAG, c.label(), runs.median(0) * 1e3,
          runs.firstSeconds()[0] * 1e3);
    }
  }

  /**
   * Runs each of {@code cases} in a child JVM of its own, one after the other, but those whose
   * label holds a {@code --skip} string (a result with no figures).
   */
  static List<Result> launchAll(List<BusyCase> cases, SparkSession spark, int numPartitions,
      SortBenchmarkArgs args, PrintStream out) {
    boolean ownRegister = !args.settings().containsKey(GpuSortConf.PINNED_REGISTER_DIR.key());
    List<String> java = new ArrayList<>(javaCommand());
    java.set(java.indexOf("-cp") + 1, CLASS_PATH_MARK);
    out.printf(Locale.ROOT, "%nEach case alone, in a JVM of its own%s: %s ...%n", ownRegister
        ? ", with a register of page-locked memory of its own so that its arena is sized as a "
        + "lone process's (this JVM's arena stays page-locked meanwhile)" : "",
        shellWords(java).replace(CLASS_PATH_MARK, "<this JVM's class path>"));
    List<Result> results = new ArrayList<>();
    for (int i = 0; i < cases.size(); i++) {
      BusyCase c = cases.get(i);
      String label = c.label().toLowerCase(Locale.ROOT);
      results.add(args.skip().stream().anyMatch(label::contains) ? notRun(c)
          : launch(c, i, spark, numPartitions, args, ownRegister, out));
    }
    return results;
  }

  private static Result launch(BusyCase c, int index, SparkSession spark, int numPartitions,
      SortBenchmarkArgs args, boolean ownRegister, PrintStream out) {
    Path register = null;
    Process child = null;
    try {
      register = ownRegister ? Files.createTempDirectory("sort-benchmark-register-") : null;
      List<String> arguments = childArguments(c, index, spark, numPartitions, args, register);
      out.println("... " + shellWords(arguments));
      List<String> command = new ArrayList<>(javaCommand());
      if (register != null) {
        // As a system property too: the arena is sized from the application's configuration
        // when the session is made (the SQL extension starts the engine early), before --conf
        // reaches the session.
        command.add(command.indexOf("-cp"), "-D" + GpuSortConf.PINNED_REGISTER_DIR.key() + "="
            + register);
      }
      command.addAll(arguments);
      ProcessBuilder builder = new ProcessBuilder(command)
          .redirectError(ProcessBuilder.Redirect.INHERIT);
      // The launcher's options are among this JVM's arguments, passed on already.
      builder.environment().remove("JDK_JAVA_OPTIONS");
      child = builder.start();
      Result result = null;
      try (BufferedReader lines = new BufferedReader(new InputStreamReader(
          child.getInputStream(), StandardCharsets.UTF_8))) {
        for (String line = lines.readLine(); line != null; line = lines.readLine()) {
          out.println(CHILD_PREFIX + line);
          if (line.startsWith(LINE_TAG + "\t")) {
            result = parseLine(line);
          }
        }
      }
      int exit = child.waitFor();
      if (exit != 0 || result == null) {
        return failed(c, "exit " + exit + (result == null ? ", no " + LINE_TAG + " line" : ""));
      }
      return result;
    } catch (IOException e) {
      return failed(c, "could not run: " + e.getMessage());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      child.destroyForcibly();
      return failed(c, "interrupted");
    } finally {
      deleteTree(register);
    }
  }

  /** The child's options: the busy session's, for the one case, in {@code --session alone}. */
  private static List<String> childArguments(BusyCase c, int index, SparkSession spark,
      int numPartitions, SortBenchmarkArgs args, Path register) {
    List<String> argv = new ArrayList<>(List.of("--session", "alone", "--alone-case", c.label(),
        "--rows", Long.toString(args.rows().get(0)), "--string-rows",
        Long.toString(args.stringRows()), "--reps", Integer.toString(args.reps()),
        "--alone-warmups", Integer.toString(args.aloneWarmups()), "--engine",
        args.engine(), "--partitions", Integer.toString(numPartitions), "--master",
        spark.sparkContext().master()));
    args.settings().forEach((key, value) -> argv.addAll(List.of("--conf", key + "=" + value)));
    if (register != null) {
      argv.addAll(List.of("--conf", GpuSortConf.PINNED_REGISTER_DIR.key() + "=" + register));
    }
    if (args.parquetDir() != null) {
      argv.addAll(List.of("--parquet-dir", args.parquetDir() + "-alone-" + index));
    }
    return argv;
  }

  /**
   * This JVM's command up to the class: its java binary, its JVM options (no debugger, agent or
   * flight recording), the {@code spark.*} settings spark-submit gave it as system properties,
   * and its class path with the benchmark's own classes.
   */
  static List<String> javaCommand() {
    List<String> command = new ArrayList<>();
    command.add(ProcessHandle.current().info().command().orElse(
        Path.of(System.getProperty("java.home"), "bin", "java").toString()));
    List<String> jvmOptions = ManagementFactory.getRuntimeMXBean().getInputArguments();
    for (String option : jvmOptions) {
      if (SKIPPED_JVM_OPTIONS.stream().noneMatch(option::startsWith) && !option.contains("jdwp")) {
        command.add(option);
      }
    }
    for (String name : new TreeSet<>(System.getProperties().stringPropertyNames())) {
      if (name.startsWith("spark.") && !PER_PROCESS_PROPERTIES.contains(name)
          && jvmOptions.stream().noneMatch(option -> option.startsWith("-D" + name + "="))) {
        command.add("-D" + name + "=" + System.getProperty(name));
      }
    }
    command.add("-cp");
    command.add(classPath());
    command.add(SortBenchmark.class.getName());
    return command;
  }

  /**
   * {@code java.class.path}, with the benchmark's and the plugin's classes added where they are
   * not on it (under spark-submit, the application jar is in Spark's class loader only).
   */
  private static String classPath() {
    List<String> entries = new ArrayList<>();
    for (String entry : System.getProperty("java.class.path", "").split(File.pathSeparator)) {
      if (!entry.isEmpty()) {
        entries.add(entry);
      }
    }
    for (Class<?> type : List.of(SortBenchmark.class, GpuSort.class)) {
      Path location = codeLocation(type);
      if (location != null && entries.stream().map(AloneRuns::absolute)
          .noneMatch(location::equals)) {
        entries.add(location.toString());
      }
    }
    return String.join(File.pathSeparator, entries);
  }

  private static Path absolute(String entry) {
    return Path.of(entry).toAbsolutePath().normalize();
  }

  /** The jar or directory {@code type} was loaded from, or null where that is not a file. */
  private static Path codeLocation(Class<?> type) {
    try {
      var source = type.getProtectionDomain().getCodeSource();
      return source == null ? null : Path.of(source.getLocation().toURI()).toAbsolutePath()
          .normalize();
    } catch (java.net.URISyntaxException | RuntimeException e) {
      return null;
    }
  }

  /** {@code words} as a shell command line, each word with a space or quote in single quotes. */
  private static String shellWords(List<String> words) {
    List<String> quoted = new ArrayList<>();
    for (String word : words) {
      quoted.add(word.matches("[\\w./:=,+@%\\[\\]-]+") ? word
          : "'" + word.replace("'", "'\\''") + "'");
    }
    return String.join(" ", quoted);
  }

  private static Result parseLine(String line) {
    String[] fields = line.split("\t");
    try {
      return new Result(fields[1], Double.parseDouble(fields[2]) / 1e3,
          Double.parseDouble(fields[3]) / 1e3, null);
    } catch (ArrayIndexOutOfBoundsException | NumberFormatException e) {
      return new Result(fields.length > 1 ? fields[1] : "?", Double.NaN, Double.NaN,
          "bad line: " + line);
    }
  }

  private static Result notRun(BusyCase c) {
    return new Result(c.label(), Double.NaN, Double.NaN, null);
  }

  private static Result failed(BusyCase c, String why) {
    return new Result(c.label(), Double.NaN, Double.NaN, why);
  }

  /** Deletes {@code dir} and what it holds, if not null; a failure is reported, not thrown. */
  private static void deleteTree(Path dir) {
    if (dir == null) {
      return;
    }
    try (Stream<Path> paths = Files.walk(dir)) {
      for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(path);
      }
    } catch (IOException | UncheckedIOException e) {
      System.err.println("SortBenchmark: warning: could not delete " + dir + ": " + e);
    }
  }

  /**
   * One row per case: its median in the busy session and alone, their ratio and whether it is
   * within 15% of 1, and each one's warm-up run.
   */
  static void printComparison(List<BusyCase> cases, BusySession.Runs busy, List<Result> alone,
      PrintStream out) {
    out.printf(Locale.ROOT, "%n%-40s %13s %14s %10s %10s %12s %13s%n", "busy and alone",
        "busy median s", "alone median s", "busy/alone", "within 15%", "busy first s",
        "alone first s");
    for (int i = 0; i < cases.size(); i++) {
      Result a = alone.get(i);
      double busyMedian = busy.median(i);
      if (a.failure() != null || Double.isNaN(a.medianSeconds())) {
        out.printf(Locale.ROOT, "%-40s %13.3f %14s   (%s)%n", cases.get(i).label(), busyMedian,
            "-", a.failure() == null ? "not run alone: --skip"
                : "the alone run failed: " + a.failure());
        continue;
      }
      double ratio = busyMedian / a.medianSeconds();
      out.printf(Locale.ROOT, "%-40s %13.3f %14.3f %10.2f %10s %12.3f %13.3f%n",
          cases.get(i).label(), busyMedian, a.medianSeconds(), ratio,
          Math.abs(ratio - 1) <= SAME_WITHIN ? "yes" : "no", busy.firstSeconds()[i],
          a.firstSeconds());
    }
    out.println("busy/alone: the case's median in the busy session / its median alone in a JVM "
        + "of its own (same options, only its input generated); first s: the warm-up run, "
        + "alone the case's first run in a fresh JVM");
  }
}
