package io.gpusort.examples;

import static io.gpusort.examples.FileSortRuns.execute;
import static io.gpusort.examples.TeraFilesTest.visibleFiles;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpusort.examples.FileSortRuns.Result;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** FileSort's terasort modes end to end: generate, sort, validate, and damage caught. */
class TeraSortTest {
  private static final long SEED = 20251203L;
  private static final int ROWS = 200_000;
  private static final int RECORD = TeraRecords.RECORD_BYTES;
  private static final Pattern CHECKSUM = Pattern.compile("checksum ([0-9a-f]+)");

  /** Generated once, with 4 partitions, and sorted once into 3: every test reads them. */
  @TempDir
  static Path shared;
  private static Path input;
  private static Path sorted;
  private static String generatedChecksum;

  @TempDir
  Path tmp;

  @BeforeAll
  static void generateAndSort() {
    input = shared.resolve("input");
    sorted = shared.resolve("sorted");
    Result generated = execute("--generate", Integer.toString(ROWS), "--output", input.toString(),
        "--partitions", "4", "--seed", Long.toString(SEED), "--quiet");
    assertEquals(FileSort.EXIT_OK, generated.exitCode(), generated.printed());
    generatedChecksum = checksumIn(generated.out());
    Result sort = execute("--input", input.toString(), "--format", "terasort", "--output",
        sorted.toString(), "--partitions", "3", "--quiet");
    assertEquals(FileSort.EXIT_OK, sort.exitCode(), sort.printed());
    assertTrue(sort.out().contains("sorted " + String.format("%,d", ROWS) + " rows by key ASC"),
        sort.printed());
  }

  @Test
  void sortedFilesAreTheInputsRecordsInUnsignedKeyOrder() throws IOException {
    assertEquals(List.of("_SUCCESS", "part-00000", "part-00001", "part-00002"),
        visibleFiles(sorted));
    for (String part : List.of("part-00000", "part-00001", "part-00002")) {
      long size = Files.size(sorted.resolve(part));
      assertTrue(size > 0 && size % RECORD == 0, part + " has " + size + " bytes");
    }
    byte[] in = concatParts(input);
    byte[] out = concatParts(sorted);
    assertEquals((long) ROWS * RECORD, in.length);

    byte[][] records = new byte[ROWS][];
    for (int i = 0; i < ROWS; i++) {
      records[i] = Arrays.copyOfRange(in, i * RECORD, (i + 1) * RECORD);
    }
    Arrays.sort(records, (a, b) -> TeraRecords.compareKeys(a, 0, b, 0));
    for (int i = 1; i < ROWS; i++) {
      // Distinct keys make the sorted order unique, so the bytes can be compared whole.
      assertNotEquals(0, TeraRecords.compareKeys(records[i - 1], 0, records[i], 0),
          "duplicate key at " + i + ", seed " + SEED);
    }
    assertArrayEquals(TeraFilesTest.concat(records), out, "seed " + SEED);
  }

  @Test
  void generatorPrintsTheChecksumOfWhatItWrote() throws IOException {
    byte[] in = concatParts(input);
    TeraChecksum.Builder checksum = new TeraChecksum.Builder();
    for (int offset = 0; offset < in.length; offset += RECORD) {
      checksum.add(in, offset);
    }
    assertEquals(ROWS, checksum.build().records());
    assertEquals(checksum.build().sumHex(), generatedChecksum);
  }

  @Test
  void validatorPassesTheSortAndMatchesTheInputsChecksum() {
    Result r = execute("--validate", sorted.toString(), "--input-checksum-of", input.toString());
    assertEquals(FileSort.EXIT_OK, r.exitCode(), r.printed());
    assertTrue(r.out().contains("200,000 records in 3 files in order, 0 duplicate keys, "
        + "checksum " + generatedChecksum), r.printed());
    assertTrue(r.out().contains("same records as file:" + input), r.printed());

    Result expected = execute("--validate", sorted.toString(), "--expect-checksum",
        generatedChecksum);
    assertEquals(FileSort.EXIT_OK, expected.exitCode(), expected.printed());
    assertTrue(expected.out().contains("checksum " + generatedChecksum + " as expected"),
        expected.printed());
  }

  /** Ways an output can be broken, each applied to a copy of the sorted files. */
  enum Damage {
    FLIP_A_BYTE, DROP_A_RECORD, DUPLICATE_A_RECORD, SWAP_ACROSS_FILES, SWAP_WITHIN_A_FILE
  }

  @ParameterizedTest
  @EnumSource(Damage.class)
  void validatorCatchesDamage(Damage damage) throws IOException {
    Path copy = Files.createDirectory(tmp.resolve("damaged"));
    // The part files alone: Hadoop would refuse to read a changed file against its .crc.
    for (String part : List.of("part-00000", "part-00001", "part-00002")) {
      Files.copy(sorted.resolve(part), copy.resolve(part));
    }
    String expected = switch (damage) {
      case FLIP_A_BYTE -> {
        Path file = copy.resolve("part-00001");
        byte[] bytes = Files.readAllBytes(file);
        bytes[10 * RECORD + 50] ^= 0x01;
        Files.write(file, bytes);
        yield "checksum mismatch: file:" + copy + " has 200,000 records, checksum ";
      }
      case DROP_A_RECORD -> {
        rewrite(copy.resolve("part-00002"), records -> records.remove(100));
        yield "checksum mismatch: file:" + copy + " has 199,999 records, checksum ";
      }
      case DUPLICATE_A_RECORD -> {
        rewrite(copy.resolve("part-00000"), records -> records.add(5, records.get(5).clone()));
        yield "checksum mismatch: file:" + copy + " has 200,001 records, checksum ";
      }
      case SWAP_ACROSS_FILES -> {
        List<byte[]> first = readRecords(copy.resolve("part-00000"));
        List<byte[]> second = readRecords(copy.resolve("part-00001"));
        byte[] last = first.get(first.size() - 1);
        first.set(first.size() - 1, second.get(0));
        second.set(0, last);
        writeRecords(copy.resolve("part-00000"), first);
        writeRecords(copy.resolve("part-00001"), second);
        yield "out of order: record 0 of file:" + copy.resolve("part-00001") + " (key "
            + TeraRecords.keyHex(last, 0) + ") sorts before the last record of file:"
            + copy.resolve("part-00000");
      }
      case SWAP_WITHIN_A_FILE -> {
        List<byte[]> records = readRecords(copy.resolve("part-00002"));
        byte[] seventh = records.get(7);
        records.set(7, records.get(8));
        records.set(8, seventh);
        writeRecords(copy.resolve("part-00002"), records);
        yield "out of order: record 8 of file:" + copy.resolve("part-00002") + " (key "
            + TeraRecords.keyHex(seventh, 0) + ") sorts before record 7";
      }
    };

    Result r = execute("--validate", copy.toString(), "--expect-checksum", generatedChecksum);
    assertEquals(FileSort.EXIT_FAILED, r.exitCode(), r.printed());
    assertEquals(1, r.err().lines().count(), r.printed());
    assertTrue(r.err().startsWith("FileSort: error: " + expected), r.printed());
  }

  @Test
  void aDroppedRecordDiffersFromTheInputsChecksum() throws IOException {
    Path copy = Files.createDirectory(tmp.resolve("damaged"));
    Files.copy(sorted.resolve("part-00000"), copy.resolve("part-00000"));
    rewrite(copy.resolve("part-00000"), records -> records.remove(0));
    Path oneInputFile = Files.createDirectory(tmp.resolve("one-input"));
    Files.copy(sorted.resolve("part-00000"), oneInputFile.resolve("part-00000"));

    Result r = execute("--validate", copy.toString(), "--input-checksum-of",
        oneInputFile.toString());
    assertEquals(FileSort.EXIT_FAILED, r.exitCode(), r.printed());
    assertTrue(r.err().startsWith("FileSort: error: checksum mismatch: file:" + copy + " has "),
        r.printed());
    assertTrue(r.err().contains("but the input file:" + oneInputFile + " has "), r.printed());
  }

  @Test
  void aPartialRecordIsRejectedBeforeReadingOrValidating() throws IOException {
    Path in = Files.createDirectory(tmp.resolve("partial"));
    Files.copy(input.resolve("part-00000"), in.resolve("part-00000"));
    Files.write(in.resolve("part-00001"), new byte[250]);
    Path output = tmp.resolve("out");
    String named = "file:" + in.resolve("part-00001") + " has 250 bytes, not a whole number of "
        + "100-byte terasort records";

    Result sort = execute("--input", in.toString(), "--format", "terasort", "--output",
        output.toString());
    assertEquals(FileSort.EXIT_USAGE, sort.exitCode(), sort.printed());
    assertEquals(1, sort.err().lines().count(), sort.printed());
    assertTrue(sort.err().startsWith("FileSort: error: " + named), sort.printed());
    assertFalse(Files.exists(output));
    try (Stream<Path> left = Files.list(tmp)) {
      assertEquals(List.of(), left.filter(p -> p.getFileName().toString().startsWith(".out"))
          .toList(), "no staging directory left");
    }

    Result validate = execute("--validate", in.toString());
    assertEquals(FileSort.EXIT_FAILED, validate.exitCode(), validate.printed());
    assertTrue(validate.err().startsWith("FileSort: error: " + named), validate.printed());
  }

  @Test
  void generatorGivesTheSameRecordsForASeedHoweverPartitioned() throws IOException {
    int rows = 30_000;
    Result a = generate(rows, 9, 3, "a");
    Result again = generate(rows, 9, 3, "again");
    Result five = generate(rows, 9, 5, "five");
    Result otherSeed = generate(rows, 10, 3, "other-seed");

    for (String part : List.of("part-00000", "part-00001", "part-00002")) {
      assertArrayEquals(Files.readAllBytes(tmp.resolve("a").resolve(part)),
          Files.readAllBytes(tmp.resolve("again").resolve(part)), part);
    }
    byte[] records = concatParts(tmp.resolve("a"));
    assertArrayEquals(records, concatParts(tmp.resolve("five")));
    assertEquals(checksumIn(a.out()), checksumIn(five.out()));
    assertEquals(checksumIn(a.out()), checksumIn(again.out()));
    assertNotEquals(checksumIn(a.out()), checksumIn(otherSeed.out()));
    assertFalse(Arrays.equals(records, concatParts(tmp.resolve("other-seed"))));
    // The files in name order hold rows 0 to rows - 1 in order.
    for (int i = 0; i < rows; i++) {
      assertEquals(i, TeraRecords.rowId(records, i * RECORD), "record " + i);
    }
  }

  @Test
  void emptyPartitionsWriteEmptyFilesThatValidate() throws IOException {
    Result generated = generate(3, 1, 5, "sparse");
    Path dir = tmp.resolve("sparse");
    // Partition p holds rows p*3/5 up to (p+1)*3/5: none, 0, none, 1, 2.
    assertArrayEquals(new long[] {0, 100, 0, 100, 100}, partSizes(dir, 5));

    Path sortedDir = tmp.resolve("sparse-sorted");
    Result sort = execute("--input", dir.toString(), "--format", "terasort", "--output",
        sortedDir.toString(), "--partitions", "5", "--quiet");
    assertEquals(FileSort.EXIT_OK, sort.exitCode(), sort.printed());
    long[] sizes = partSizes(sortedDir, 5);
    assertEquals(300, Arrays.stream(sizes).sum());
    assertTrue(Arrays.stream(sizes).filter(size -> size == 0).count() >= 2,
        Arrays.toString(sizes));

    Result validated = execute("--validate", sortedDir.toString(), "--expect-checksum",
        checksumIn(generated.out()));
    assertEquals(FileSort.EXIT_OK, validated.exitCode(), validated.printed());
    assertTrue(validated.out().contains("3 records in 5 files in order"), validated.printed());
  }

  // ---------------------------------------------------------------- helpers

  private Result generate(int rows, long seed, int partitions, String dir) {
    Result r = execute("--generate", Integer.toString(rows), "--seed", Long.toString(seed),
        "--partitions", Integer.toString(partitions), "--output", tmp.resolve(dir).toString(),
        "--quiet");
    assertEquals(FileSort.EXIT_OK, r.exitCode(), r.printed());
    return r;
  }

  /** The sizes of {@code dir}'s files part-00000 to part-(n-1), which must be all its parts. */
  private static long[] partSizes(Path dir, int n) throws IOException {
    List<String> parts = visibleFiles(dir).stream().filter(f -> f.startsWith("part-")).toList();
    assertEquals(n, parts.size(), parts.toString());
    long[] sizes = new long[n];
    for (int p = 0; p < n; p++) {
      sizes[p] = Files.size(dir.resolve(TeraOutputFormat.fileName(p)));
    }
    return sizes;
  }

  private static String checksumIn(String out) {
    Matcher m = CHECKSUM.matcher(out);
    assertTrue(m.find(), out);
    return m.group(1);
  }

  /** The part files of {@code dir}, in name order, one after the other. */
  private static byte[] concatParts(Path dir) throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    for (String name : visibleFiles(dir)) {
      if (name.startsWith("part-")) {
        bytes.write(Files.readAllBytes(dir.resolve(name)));
      }
    }
    return bytes.toByteArray();
  }

  private static List<byte[]> readRecords(Path file) throws IOException {
    byte[] bytes = Files.readAllBytes(file);
    List<byte[]> records = new java.util.ArrayList<>();
    for (int offset = 0; offset < bytes.length; offset += RECORD) {
      records.add(Arrays.copyOfRange(bytes, offset, offset + RECORD));
    }
    return records;
  }

  private static void writeRecords(Path file, List<byte[]> records) throws IOException {
    Files.write(file, TeraFilesTest.concat(records.toArray(new byte[0][])));
  }

  private static void rewrite(Path file, java.util.function.Consumer<List<byte[]>> change)
      throws IOException {
    List<byte[]> records = readRecords(file);
    change.accept(records);
    writeRecords(file, records);
  }
}
