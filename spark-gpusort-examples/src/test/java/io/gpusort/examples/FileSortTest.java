package io.gpusort.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import io.gpusort.config.GpuSortConf;
import io.gpusort.examples.FileSortArgs.KeySpec;
import io.gpusort.examples.FileSortArgs.UsageException;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.FilterFileSystem;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.util.Progressable;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.core.config.builder.impl.BuiltConfiguration;
import org.apache.spark.launcher.JavaModuleOptions;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.DataFrameReader;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class FileSortTest {
  private static final long SEED = 20240611L;
  private static final int NUM_ROWS = 600;
  private static final String KEYS = "a:desc,b:nulls_last,s";

  @TempDir
  Path tmp;

  // ---------------------------------------------------------------- argument parsing

  @Test
  void parsesKeySpecsWithSparkDefaults() {
    assertEquals(List.of(
            new KeySpec("a", false, true),
            new KeySpec("b", true, false),
            new KeySpec("c", false, false),
            new KeySpec("d", true, true),
            new KeySpec("e", false, false),
            new KeySpec("f", true, false),
            new KeySpec("g.h", true, true)),
        FileSortArgs.parseKeys(
            "a,b:desc,c:asc:nulls_last,d:desc:nulls_first,e:nulls_last, f : DESC ,"
                + "g.h:NULLS_FIRST:desc"));
  }

  @Test
  void keySpecNamesTopLevelColumnsEvenWithDots() {
    KeySpec key = FileSortArgs.parseKeys("g.h:desc:nulls_first").get(0);
    assertEquals("g.h DESC NULLS FIRST", key.describe());
    Dataset<Row> data = SharedSpark.get().range(3).withColumnRenamed("id", "g.h");
    List<Long> sorted = data.orderBy(key.toColumn()).as(Encoders.LONG()).collectAsList();
    assertEquals(List.of(2L, 1L, 0L), sorted);
  }

  @ParameterizedTest
  @ValueSource(strings = {"", " ", "a,", ",a", "a,,b", "a:", ":desc", "a:up", "a:asc:desc",
      "a:desc:desc", "a:nulls_first:nulls_last", "a:desc:nulls_first:asc", "a:nulls first"})
  void rejectsMalformedKeySpecs(String spec) {
    UsageException e = assertThrows(UsageException.class, () -> FileSortArgs.parseKeys(spec));
    assertTrue(e.getMessage().startsWith("malformed --key"), e.getMessage());
  }

  @Test
  void parsesFullCommandLine() {
    FileSortArgs args = FileSortArgs.parse("--input", "in.csv", "--format", "CSV", "--key",
        "x:desc", "--output=out", "--partitions=8", "--master", "local[1]", "--overwrite");
    assertEquals("in.csv", args.input());
    assertEquals("csv", args.format());
    assertEquals("csv", args.outputFormat());
    assertEquals(List.of(new KeySpec("x", true, false)), args.keys());
    assertEquals("out", args.output());
    assertEquals(8, args.partitions());
    assertEquals("local[1]", args.master());
    assertTrue(args.overwrite());
    assertFalse(args.demo());

    FileSortArgs converting = FileSortArgs.parse("--input", "i", "--format", "json", "--key", "k",
        "--output", "o", "--output-format", "parquet");
    assertEquals("parquet", converting.outputFormat());
    assertEquals(0, converting.partitions());
  }

  @Test
  void parsesDemoCommandLine() {
    FileSortArgs args = FileSortArgs.parse("--demo", "--rows", "1_000_000", "--partitions", "3");
    assertTrue(args.demo());
    assertEquals(1_000_000L, args.demoRows());
    assertEquals(3, args.partitions());
    assertEquals(FileSortArgs.DEFAULT_DEMO_ROWS, FileSortArgs.parse("--demo").demoRows());
  }

  @ParameterizedTest
  @ValueSource(strings = {
      "--frobnicate",
      "-x",
      "stray",
      "--input",
      "--input --format csv",
      "--input a --input b --format csv --key k --output o",
      "--input i --format avro --key k --output o",
      "--input i --format csv --key k --output o --output-format xml",
      "--input i --format csv --key a:sideways --output o",
      "--input i --format csv --key k",
      "--format csv --key k --output o",
      "--input i --format csv --key k --output o --partitions 0",
      "--input i --format csv --key k --output o --partitions many",
      "--input i --format csv --key k --output o --rows 5",
      "--demo --input i",
      "--demo --rows -1",
      "--demo=yes",
      "--demo --verbose=yes",
      "--input i --format csv --output o",
      "--input i --format terasort --output o --output-format parquet",
      "--input i --format parquet --key k --output o --output-format terasort",
      "--input i --format terasort --output o --partitions 100001",
      "--input i --format csv --key k --output o --seed 3",
      "--input i --format csv --key k --output o --progress-interval 0",
      "--input i --format csv --key k --output o --progress-interval soon",
      "--generate 10",
      "--generate 0 --output o",
      "--generate 10 --output o --partitions 100001",
      "--generate 10 --output o --input i",
      "--generate 10 --output o --key k",
      "--generate 10 --output o --seed many",
      "--validate d --seed 3",
      "--validate d --input-checksum-of i --expect-checksum ab",
      "--validate d --expect-checksum xyz",
      "--demo --generate 5 --output o",
      "--validate d --generate 5"})
  void rejectsBadCommandLinesWithOneLineAndExitCode2(String commandLine) {
    Result r = runMain(commandLine.split(" "));
    assertEquals(FileSort.EXIT_USAGE, r.exitCode, r.err);
    assertEquals("", r.out);
    assertEquals(1, r.err.lines().count(), r.err);
    assertTrue(r.err.startsWith("FileSort: error: "), r.err);
  }

  @Test
  void terasortNeedsNoKeyAndSortsByItsKeyColumn() {
    FileSortArgs args = FileSortArgs.parse("--input", "in", "--format", "TeraSort", "--output",
        "out", "--partitions", "100000");
    assertEquals(FileSortArgs.Mode.SORT, args.mode());
    assertEquals("terasort", args.format());
    assertEquals("terasort", args.outputFormat());
    assertEquals(List.of(new KeySpec("key", false, true)), args.keys());
    assertEquals(100_000, args.partitions());
    assertEquals(List.of(new KeySpec("key", true, false)), FileSortArgs.parse("--input", "in",
        "--format", "terasort", "--key", "key:desc", "--output", "out").keys());
  }

  @Test
  void parsesGenerateAndValidateCommandLines() {
    FileSortArgs generate = FileSortArgs.parse("--generate", "1_000", "--output", "o", "--seed",
        "-5", "--partitions", "7", "--overwrite", "--quiet");
    assertEquals(FileSortArgs.Mode.GENERATE, generate.mode());
    assertEquals(1000, generate.generateRows());
    assertEquals(-5, generate.seed());
    assertEquals(7, generate.partitions());
    assertTrue(generate.overwrite());
    assertEquals(0, generate.progressIntervalMillis(), "--quiet");
    assertEquals(0, FileSortArgs.parse("--generate", "5", "--output", "o").seed());

    FileSortArgs validate = FileSortArgs.parse("--validate", "d", "--expect-checksum", "0xABC");
    assertEquals(FileSortArgs.Mode.VALIDATE, validate.mode());
    assertEquals("d", validate.validate());
    assertEquals(java.math.BigInteger.valueOf(0xABC), validate.expectChecksum());
    assertEquals("i", FileSortArgs.parse("--validate", "d", "--input-checksum-of", "i")
        .inputChecksumOf());
  }

  @Test
  void progressIsEveryTenSecondsUnlessToldOtherwise() {
    String[] sort = {"--input", "i", "--format", "csv", "--key", "k", "--output", "o"};
    assertEquals(10_000, FileSortArgs.parse(sort).progressIntervalMillis());
    String[] fast = Arrays.copyOf(sort, sort.length + 2);
    fast[sort.length] = "--progress-interval";
    fast[sort.length + 1] = "0.25";
    assertEquals(250, FileSortArgs.parse(fast).progressIntervalMillis());
  }

  @Test
  void verboseIsAFlagOfBothModes() {
    assertTrue(FileSortArgs.parse("--demo", "--verbose").verbose());
    assertTrue(FileSortArgs.parse("--input", "i", "--format", "csv", "--key", "k", "--output", "o",
        "--verbose").verbose());
    assertFalse(FileSortArgs.parse("--demo").verbose());
  }

  @Test
  void partitionsAreLimitedToWhatGpuSortAccepts() {
    int max = GpuSortConf.MAX_OUTPUT_PARTITIONS;
    assertTrue(FileSortArgs.USAGE.contains("1 to " + max + "."), FileSortArgs.USAGE);
    assertEquals(max,
        FileSortArgs.parse("--demo", "--partitions", Integer.toString(max)).partitions());
    assertEquals(max, FileSortArgs.parse("--input", "i", "--format", "csv", "--key", "k",
        "--output", "o", "--partitions=" + max).partitions());

    String[] fileMode = {"--input", "i", "--format", "csv", "--key", "k", "--output", "o"};
    for (String partitions : List.of(Integer.toString(max + 1), "2000000", "2147483647",
        "2147483648")) {
      for (String[] mode : List.of(fileMode, new String[] {"--demo"})) {
        String[] argv = Arrays.copyOf(mode, mode.length + 2);
        argv[mode.length] = "--partitions";
        argv[mode.length + 1] = partitions;
        Result r = runMain(argv);
        assertEquals(FileSort.EXIT_USAGE, r.exitCode, r.err);
        assertOneErrorLine(r, "--partitions must be between 1 and " + max + ", not " + partitions);
        assertFalse(r.err.contains("spark.gpusort"), r.err);
      }
    }
  }

  @Test
  void unsupportedFormatLeavesNoOutput() throws IOException {
    Path input = writeInput("parquet", false);
    Path output = tmp.resolve("out");
    Result r = runMain("--input", input.toString(), "--format", "avro", "--key", "a",
        "--output", output.toString());
    assertEquals(FileSort.EXIT_USAGE, r.exitCode);
    assertTrue(r.err.contains("unsupported format 'avro'"), r.err);
    assertNoOutput(output);
  }

  @Test
  void helpPrintsUsage() {
    Result r = runMain("--help");
    assertEquals(FileSort.EXIT_OK, r.exitCode);
    assertTrue(r.out.startsWith("usage: FileSort"), r.out);
  }

  // ---------------------------------------------------------------- end to end

  @ParameterizedTest
  @ValueSource(strings = {"csv", "parquet", "json"})
  void sortedFileEqualsSparkOrderBy(String format) throws IOException {
    // JSON writes NaN and Infinity as quoted strings, which read back as a string column.
    Path input = writeInput(format, !format.equals("json"));
    Path output = tmp.resolve("sorted");

    Result r = execute("--input", input.toString(), "--format", format, "--key", KEYS,
        "--output", output.toString(), "--partitions", "3");

    assertEquals(FileSort.EXIT_OK, r.exitCode, r.err);
    assertTrue(r.out.contains("sorted " + NUM_ROWS + " rows by a DESC NULLS LAST, "
        + "b ASC NULLS LAST, s ASC NULLS FIRST"), r.out);
    assertTrue(r.out.contains("(engine "), r.out);
    assertTrue(Files.exists(output.resolve("_SUCCESS")));
    assertFalse(Files.exists(output.resolve(StagedOutput.PROBE_NAME)));
    assertNoStagingLeft(output);

    Dataset<Row> in = reader(format).load(input.toString());
    List<Row> expected = in.orderBy(sortOrders(KEYS)).collectAsList();
    List<Row> actual = readInOrder(format, in.schema(), output);
    assertSameSortedRows(expected, actual, new int[] {in.schema().fieldIndex("a"),
        in.schema().fieldIndex("b"), in.schema().fieldIndex("s")}, format);
  }

  @Test
  void convertsFormatWhileSorting() throws IOException {
    Path input = writeInput("csv", true);
    Path output = tmp.resolve("sorted.parquet");
    Result r = execute("--input", input.toString(), "--format", "csv", "--key", "id:desc",
        "--output", output.toString(), "--output-format", "parquet");
    assertEquals(FileSort.EXIT_OK, r.exitCode, r.err);
    List<Row> rows = readInOrder("parquet", null, output);
    assertEquals(NUM_ROWS, rows.size());
    for (int i = 0; i < rows.size(); i++) {
      assertEquals(NUM_ROWS - 1 - i, rows.get(i).<Number>getAs("id").longValue());
    }
  }

  @Test
  void missingInputExitsNonZeroAndLeavesNoOutput() {
    Path output = tmp.resolve("out");
    Result r = execute("--input", tmp.resolve("no-such-file.csv").toString(), "--format", "csv",
        "--key", "a", "--output", output.toString());
    assertEquals(FileSort.EXIT_USAGE, r.exitCode);
    assertOneErrorLine(r, "input not found");
    assertNoOutput(output);
  }

  @Test
  void unknownColumnExitsNonZeroAndLeavesNoOutput() throws IOException {
    Path input = writeInput("csv", true);
    Path output = tmp.resolve("out");
    Result r = execute("--input", input.toString(), "--format", "csv", "--key", "a,nope:desc",
        "--output", output.toString());
    assertEquals(FileSort.EXIT_USAGE, r.exitCode);
    assertOneErrorLine(r, "unknown column 'nope' in --key");
    assertNoOutput(output);
  }

  @Test
  void existingOutputIsKeptUnlessOverwrite() throws IOException {
    Path input = writeInput("parquet", true);
    Path output = Files.createDirectories(tmp.resolve("out"));
    Path marker = Files.writeString(output.resolve("keep.txt"), "old");
    String[] command = {"--input", input.toString(), "--format", "parquet", "--key", "a",
        "--output", output.toString()};

    Result refused = execute(command);
    assertEquals(FileSort.EXIT_USAGE, refused.exitCode);
    assertOneErrorLine(refused, "output already exists");
    assertTrue(Files.exists(marker));

    String[] overwrite = Arrays.copyOf(command, command.length + 1);
    overwrite[command.length] = "--overwrite";
    Result replaced = execute(overwrite);
    assertEquals(FileSort.EXIT_OK, replaced.exitCode, replaced.err);
    assertFalse(Files.exists(marker));
    assertTrue(Files.exists(output.resolve("_SUCCESS")));
    assertNoStagingLeft(output);
  }

  @Test
  void failedWriteLeavesNoOutput() {
    // CSV cannot hold an array column: the write fails after the staging directory is chosen.
    SparkSession spark = SharedSpark.get();
    Path input = tmp.resolve("arrays.parquet");
    spark.range(10).select(functions.col("id"), functions.array(functions.col("id")).as("arr"))
        .write().parquet(input.toString());
    Path output = tmp.resolve("out.csv");
    Result r = execute("--input", input.toString(), "--format", "parquet", "--key", "id",
        "--output", output.toString(), "--output-format", "csv");
    assertEquals(FileSort.EXIT_FAILED, r.exitCode, r.out);
    assertEquals(1, r.err.lines().count(), r.err);
    assertNoOutput(output);
  }

  // ---------------------------------------------------------------- errors: one line, root cause

  @Test
  void corruptInputFailsWithTheRootCauseInOneLine() throws IOException {
    Path input = writeCorruptParquet();
    Path output = tmp.resolve("out");
    Result r = execute("--input", input.toString(), "--format", "parquet", "--key", "a",
        "--output", output.toString());
    assertEquals(FileSort.EXIT_FAILED, r.exitCode, r.err);
    assertOneErrorLine(r, "is not a Parquet file");
    assertEquals(0, stackTraceLines(r.err), r.err);
    assertNoOutput(output);
  }

  @Test
  void verbosePrintsTheStackTraceBeforeTheRootCause() throws IOException {
    Path input = writeCorruptParquet();
    Path output = tmp.resolve("out");
    Result r = execute("--input", input.toString(), "--format", "parquet", "--key", "a",
        "--output", output.toString(), "--verbose");
    assertEquals(FileSort.EXIT_FAILED, r.exitCode, r.err);
    assertTrue(stackTraceLines(r.err) > 0, r.err);
    assertTrue(r.err.contains("Caused by: "), r.err);
    String last = lastLine(r.err);
    assertTrue(last.startsWith("FileSort: error: ") && last.contains("is not a Parquet file"),
        r.err);
    assertNoOutput(output);
  }

  /**
   * The user's view: FileSort's main in a JVM of its own with no log4j configuration, where it
   * configures logging itself. Spark's executor, scheduler and writer would each log the failed
   * task with its stack trace; none of that may reach stderr without --verbose.
   */
  @Test
  void mainPrintsNoSparkStackTracesForAFailedTask() throws IOException, InterruptedException {
    Path input = writeCorruptParquet();
    Path output = tmp.resolve("out");
    Result r = runMainInOwnJvm("--input", input.toString(), "--format", "parquet", "--key", "a",
        "--output", output.toString(), "--master", "local[1]");
    assertEquals(FileSort.EXIT_FAILED, r.exitCode, r.err);
    assertEquals("", r.out);
    String last = lastLine(r.err);
    assertTrue(last.startsWith("FileSort: error: ") && last.contains("is not a Parquet file"),
        r.err);
    assertEquals(0, stackTraceLines(r.err), r.err);
    assertNoOutput(output);
  }

  @Test
  void quietLoggingTurnsTaskFailureReportsOffUnlessVerbose() {
    BuiltConfiguration quiet = ExampleRuntime.quietConfiguration(false);
    BuiltConfiguration verbose = ExampleRuntime.quietConfiguration(true);
    for (String logger : ExampleRuntime.TASK_FAILURE_LOGGERS) {
      assertEquals(Level.OFF, quiet.getLoggerConfig(logger).getLevel(), logger);
      assertEquals(Level.WARN, verbose.getLoggerConfig(logger).getLevel(), logger);
    }
    // Other classes still warn, in both.
    String other = "org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat";
    assertEquals(Level.WARN, quiet.getLoggerConfig(other).getLevel());
  }

  @Test
  void rootCauseLineIsTheDeepestMessage() {
    Exception parquet = new RuntimeException(
        "file:/in/x.parquet is not a Parquet file. Expected magic number at tail\nmore");
    Exception task = new IllegalStateException("  ", parquet);
    Exception job = new RuntimeException(
        "Job aborted due to stage failure: Lost task 0.0\n\tat org.apache.spark.Foo", task);
    assertEquals("file:/in/x.parquet is not a Parquet file. Expected magic number at tail",
        FileSort.rootCauseLine(job));

    assertEquals("AccessDeniedException: /out/x",
        FileSort.rootCauseLine(new IOException("wrapped", new AccessDeniedException("/out/x"))));
    assertEquals("java.lang.IllegalStateException",
        FileSort.rootCauseLine(new IllegalStateException()));

    Exception first = new Exception("first");
    Exception second = new Exception("second", first);
    first.initCause(second);
    assertEquals("first", FileSort.rootCauseLine(second), "a cycle of causes ends the walk");
  }

  // ---------------------------------------------------------------- unwritable output

  @Test
  void outputUnderARegularFileIsRefusedBeforeTheInputIsRead() throws IOException {
    // Reading this input fails with "is not a Parquet file": an error without it was found first.
    Path input = writeCorruptParquet();
    Path file = Files.writeString(tmp.resolve("a-file"), "stays a file");
    for (Path output : List.of(file.resolve("out"), file.resolve("sub").resolve("out"))) {
      Result r = execute("--input", input.toString(), "--format", "parquet", "--key", "a",
          "--output", output.toString());
      assertEquals(FileSort.EXIT_USAGE, r.exitCode, r.err);
      assertOneErrorLine(r, "cannot write the output at file:" + output + ": ");
      assertFalse(r.err.contains("Parquet"), r.err);
      assertEquals("stays a file", Files.readString(file));
    }
  }

  @Test
  void outputInAReadOnlyDirectoryIsRefusedBeforeTheInputIsRead() throws IOException {
    Path input = writeCorruptParquet();
    Path readOnly = Files.createDirectory(tmp.resolve("read-only"));
    Files.setPosixFilePermissions(readOnly, PosixFilePermissions.fromString("r-xr-xr-x"));
    try {
      assumeFalse(Files.isWritable(readOnly),
          "this user (root?) can write into a read-only directory");
      Path output = readOnly.resolve("out");
      Result r = execute("--input", input.toString(), "--format", "parquet", "--key", "a",
          "--output", output.toString());
      assertEquals(FileSort.EXIT_USAGE, r.exitCode, r.err);
      assertOneErrorLine(r, "cannot write the output at file:" + output + ": ");
      assertFalse(r.err.contains("Parquet"), r.err);
      assertNoOutput(output);
    } finally {
      Files.setPosixFilePermissions(readOnly, PosixFilePermissions.fromString("rwxr-xr-x"));
    }
  }

  @Test
  void stagingIsRemovedWhenItsProbeCannotBeWritten() throws IOException {
    Configuration conf = new Configuration();
    FileSystem refusesFiles = new FilterFileSystem(FileSystem.getLocal(conf)) {
      @Override
      public FSDataOutputStream create(org.apache.hadoop.fs.Path f, FsPermission permission,
          boolean overwrite, int bufferSize, short replication, long blockSize,
          Progressable progress) throws IOException {
        throw new IOException(f + " (Permission denied)");
      }
    };
    refusesFiles.setConf(conf);
    Path output = tmp.resolve("new-parent").resolve("out");

    IOException e = assertThrows(IOException.class, () -> StagedOutput.create(refusesFiles,
        new org.apache.hadoop.fs.Path(output.toUri())));

    assertTrue(e.getMessage().contains(StagedOutput.PROBE_NAME + " (Permission denied)"),
        e.getMessage());
    assertTrue(Files.isDirectory(output.getParent()), "the parent is made before the probe");
    assertNoOutput(output);
  }

  // ---------------------------------------------------------------- demo and its check

  @Test
  void demoPassesOnSmallInput() {
    Result r = execute("--demo", "--rows", "3000", "--partitions", "2");
    assertEquals(FileSort.EXIT_OK, r.exitCode, r.out + r.err);
    assertTrue(r.out.contains("check passed"), r.out);
    assertTrue(r.out.contains("ratio GpuSort / orderBy"), r.out);
  }

  @Test
  void orderChecksumIgnoresPartitioningButSeesOrderAndRows() {
    SparkSession spark = SharedSpark.get();
    List<String> keys = List.of("k_long", "k_double", "k_string");
    Dataset<Row> input = SortDemo.generate(spark, 3000, 3).cache();
    // Cached, so that every variant below sees this one sorted order.
    Dataset<Row> sorted = input.orderBy(SortDemo.sortOrders()).cache();
    OrderChecksum reference = OrderChecksum.of(sorted, keys);
    assertEquals(3000, reference.rows);

    assertNull(reference.differenceFrom(OrderChecksum.of(sorted.coalesce(1), keys)));
    assertEquals("key sequences differ", reference.differenceFrom(OrderChecksum.of(input, keys)));

    // -0.0 and 0.0 are equal keys, so only the row multiset tells this output apart.
    assertTrue(input.filter("cast(k_double as string) = '-0.0'").count() > 0, "no -0.0 generated");
    Dataset<Row> zeroFolded = sorted.withColumn("k_double",
        functions.when(functions.col("k_double").equalTo(0), functions.lit(0.0))
            .otherwise(functions.col("k_double")));
    assertEquals("row multisets differ",
        reference.differenceFrom(OrderChecksum.of(zeroFolded, keys)));

    String lost = reference.differenceFrom(OrderChecksum.of(sorted.filter("id <> 17"), keys));
    assertNotNull(lost);
    assertTrue(lost.startsWith("row counts differ"), lost);
    sorted.unpersist();
    input.unpersist();
  }

  // ---------------------------------------------------------------- helpers

  private record Result(int exitCode, String out, String err) {}

  /**
   * Runs FileSort's main in a JVM of its own, as {@code java -cp} would: this module's test
   * resources (with their log4j configuration) are left off the class path.
   */
  private Result runMainInOwnJvm(String... argv) throws IOException, InterruptedException {
    String classPath = Arrays.stream(
            System.getProperty("java.class.path").split(File.pathSeparator))
        .filter(entry -> !Path.of(entry).endsWith("test-classes"))
        .collect(Collectors.joining(File.pathSeparator));
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-Xmx1g");
    command.addAll(Arrays.asList(JavaModuleOptions.defaultModuleOptions().split(" ")));
    command.add("-Dspark.ui.enabled=false");
    command.addAll(List.of("-cp", classPath, FileSort.class.getName()));
    command.addAll(Arrays.asList(argv));
    Path out = tmp.resolve("main.out");
    Path err = tmp.resolve("main.err");
    ProcessBuilder builder = new ProcessBuilder(command)
        .redirectOutput(out.toFile()).redirectError(err.toFile());
    builder.environment().put("SPARK_LOCAL_IP", "127.0.0.1");
    Process process = builder.start();
    if (!process.waitFor(3, TimeUnit.MINUTES)) {
      process.destroyForcibly();
      fail("FileSort did not end within 3 minutes; stderr:\n" + Files.readString(err));
    }
    return new Result(process.exitValue(), Files.readString(out), Files.readString(err));
  }

  /** Lines of printed stack traces: "\tat ...", or "at org...." where tabs were stripped. */
  private static long stackTraceLines(String text) {
    return text.lines().filter(l -> l.startsWith("\tat ") || l.startsWith("at org.")).count();
  }

  private static String lastLine(String text) {
    List<String> lines = text.lines().toList();
    return lines.isEmpty() ? "" : lines.get(lines.size() - 1);
  }

  /** A file named as Parquet that holds text: Spark fails reading its footer, in a task. */
  private Path writeCorruptParquet() throws IOException {
    return Files.writeString(tmp.resolve("corrupt.parquet"),
        "these bytes are not a Parquet file\n".repeat(8));
  }

  private static Result runMain(String... argv) {
    return capture(argv, true);
  }

  private static Result execute(String... argv) {
    return capture(argv, false);
  }

  private static Result capture(String[] argv, boolean viaRun) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    try (PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
         PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
      int code = viaRun
          ? FileSort.run(argv, o, e)
          : FileSort.execute(SharedSpark.get(), FileSortArgs.parse(argv), o, e);
      return new Result(code, out.toString(StandardCharsets.UTF_8),
          err.toString(StandardCharsets.UTF_8));
    }
  }

  /**
   * Writes {@link #NUM_ROWS} seeded random rows in {@code format}: a unique id, a long key with
   * duplicates and nulls, a double key with -0.0, 0.0, nulls and (optionally) NaN and +-Infinity,
   * and a string key with duplicates and nulls.
   */
  private Path writeInput(String format, boolean withNonFinite) {
    Random random = new Random(SEED);
    double[] specials = withNonFinite
        ? new double[] {-0.0, 0.0, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, 1.5, -1.5}
        : new double[] {-0.0, 0.0, 1.5, -1.5};
    List<Row> rows = new ArrayList<>();
    for (int id = 0; id < NUM_ROWS; id++) {
      Long a = random.nextInt(10) == 0 ? null : (long) random.nextInt(40) - 20;
      int pick = random.nextInt(12);
      Double b = pick == 0 ? null
          : pick == 1 && withNonFinite ? Double.NaN
          : pick < 6 ? specials[random.nextInt(specials.length)]
          : random.nextInt(20) / 4.0;
      String s = random.nextInt(8) == 0 ? null : "s" + random.nextInt(5);
      rows.add(RowFactory.create((long) id, a, b, s));
    }
    StructType schema = new StructType()
        .add("id", DataTypes.LongType)
        .add("a", DataTypes.LongType)
        .add("b", DataTypes.DoubleType)
        .add("s", DataTypes.StringType);
    Path path = tmp.resolve("input." + format);
    SharedSpark.get().createDataFrame(rows, schema).repartition(2).write().format(format)
        .option("header", "true").save(path.toString());
    return path;
  }

  private static DataFrameReader reader(String format) {
    DataFrameReader reader = SharedSpark.get().read().format(format);
    return format.equals("csv") ? reader.option("header", "true").option("inferSchema", "true")
        : reader;
  }

  private static Column[] sortOrders(String keys) {
    return FileSortArgs.parseKeys(keys).stream().map(KeySpec::toColumn).toArray(Column[]::new);
  }

  /**
   * The rows of a written directory in output order: part files in name order, each read alone,
   * since Spark reads a directory's files in an order of its own choosing.
   */
  private static List<Row> readInOrder(String format, StructType schema, Path dir)
      throws IOException {
    List<Path> parts;
    try (Stream<Path> files = Files.list(dir)) {
      parts = files.filter(p -> p.getFileName().toString().startsWith("part-")).sorted().toList();
    }
    List<Row> rows = new ArrayList<>();
    for (Path part : parts) {
      DataFrameReader reader = SharedSpark.get().read().format(format).option("header", "true");
      if (schema != null) {
        reader.schema(schema);
      }
      rows.addAll(reader.load(part.toString()).collectAsList());
    }
    return rows;
  }

  /** Same key at every position; the same rows, as multisets, within each run of equal keys. */
  private static void assertSameSortedRows(List<Row> expected, List<Row> actual, int[] keyIndexes,
      String format) {
    String context = "format " + format + ", seed " + SEED;
    assertEquals(expected.size(), actual.size(), "row count, " + context);
    int runStart = 0;
    for (int i = 0; i < expected.size(); i++) {
      List<Object> key = key(expected.get(i), keyIndexes);
      assertEquals(key, key(actual.get(i), keyIndexes), "key at position " + i + ", " + context);
      boolean runEnds =
          i + 1 == expected.size() || !key.equals(key(expected.get(i + 1), keyIndexes));
      if (runEnds) {
        assertEquals(rowStrings(expected.subList(runStart, i + 1)),
            rowStrings(actual.subList(runStart, i + 1)),
            "rows with key " + key + " at positions " + runStart + ".." + i + ", " + context);
        runStart = i + 1;
      }
    }
  }

  /** A key as Spark compares it: -0.0 equals 0.0 and NaN equals NaN (as Double.equals does). */
  private static List<Object> key(Row row, int[] keyIndexes) {
    List<Object> key = new ArrayList<>();
    for (int index : keyIndexes) {
      Object v = row.get(index);
      key.add(v instanceof Double d && d == 0.0 ? (Object) 0.0 : v);
    }
    return key;
  }

  private static List<String> rowStrings(List<Row> rows) {
    List<String> strings = new ArrayList<>();
    rows.forEach(r -> strings.add(r.toString()));
    Collections.sort(strings);
    return strings;
  }

  private static void assertOneErrorLine(Result r, String expected) {
    assertEquals(1, r.err.lines().count(), r.err);
    assertTrue(r.err.startsWith("FileSort: error: ") && r.err.contains(expected), r.err);
  }

  private void assertNoOutput(Path output) {
    assertFalse(Files.exists(output), output + " exists");
    assertNoStagingLeft(output);
  }

  private static void assertNoStagingLeft(Path output) {
    String prefix = "." + output.getFileName() + ".tmp-";
    try (Stream<Path> siblings = Files.list(output.getParent())) {
      List<Path> left =
          siblings.filter(p -> p.getFileName().toString().startsWith(prefix)).toList();
      assertEquals(List.of(), left);
    } catch (IOException e) {
      fail(e);
    }
  }
}
