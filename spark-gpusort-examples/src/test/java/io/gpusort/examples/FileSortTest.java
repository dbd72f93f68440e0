package io.gpusort.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.gpusort.examples.FileSortArgs.KeySpec;
import io.gpusort.examples.FileSortArgs.UsageException;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
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
      "--demo=yes"})
  void rejectsBadCommandLinesWithOneLineAndExitCode2(String commandLine) {
    Result r = runMain(commandLine.split(" "));
    assertEquals(FileSort.EXIT_USAGE, r.exitCode, r.err);
    assertEquals("", r.out);
    assertEquals(1, r.err.lines().count(), r.err);
    assertTrue(r.err.startsWith("FileSort: error: "), r.err);
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
