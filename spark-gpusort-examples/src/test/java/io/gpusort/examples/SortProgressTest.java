package io.gpusort.examples;

import static io.gpusort.examples.FileSortRuns.execute;
import static org.apache.spark.sql.functions.col;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpusort.GpuSort;
import io.gpusort.examples.FileSortRuns.Result;
import io.gpusort.examples.SortProgress.Counts;
import io.gpusort.examples.SortProgress.Work;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SortProgressTest {
  private static final long SECOND = 1_000_000_000L;
  private static final int ROWS = 50_000;

  @TempDir
  Path tmp;

  // ---------------------------------------------------------------- the line

  @Test
  void aSortIsHalfReadingHalfWriting() {
    Work work = Work.sort(1000, 100_000);
    assertEquals("0:00:10 read 500 of 1,000 rows, sorted 400, written 0 (25%); 25 rows/s; "
        + "about 0:00:30 left",
        SortProgress.describe(work, new Counts(500, 50_000, 400, 0, false), 10 * SECOND));
    assertEquals("0:01:00 read 1,000 of 1,000 rows, sorted 1,000, written 500 (75%); 13 rows/s;"
        + " about 0:00:20 left",
        SortProgress.describe(work, new Counts(1000, 100_000, 1000, 500, true), 60 * SECOND));
  }

  @Test
  void unknownRowsAreExtrapolatedFromTheBytesRead() {
    // A quarter of the bytes held 100 rows: 400 expected, an eighth of the whole job done.
    Work work = Work.sort(0, 1000);
    assertEquals("0:00:08 read 100 of 400 rows, sorted 0, written 0 (12%); 6 rows/s; "
        + "about 0:00:56 left",
        SortProgress.describe(work, new Counts(100, 250, 0, 0, false), 8 * SECOND));
    // Once the map side is done its rows are the count.
    assertEquals("0:00:08 read 300 of 300 rows, sorted 300, written 150 (75%); 28 rows/s; "
        + "about 0:00:02 left",
        SortProgress.describe(work, new Counts(300, 1000, 300, 150, true), 8 * SECOND));
  }

  @Test
  void nothingToGoOnGivesNoEstimate() {
    assertEquals("0:00:03 read 0 rows, sorted 0, written 0; estimating the time left",
        SortProgress.describe(Work.sort(0, 0), new Counts(0, 0, 0, 0, false), 3 * SECOND));
    assertEquals("0:00:03 read 0 of 10 rows, sorted 0, written 0; estimating the time left",
        SortProgress.describe(Work.sort(10, 1000), new Counts(0, 0, 0, 0, false), 3 * SECOND));
  }

  @Test
  void aGenerationIsAllWriting() {
    assertEquals("0:00:05 written 50 of 100 rows (50%); 10 rows/s; about 0:00:05 left",
        SortProgress.describe(Work.generate(100), new Counts(0, 0, 0, 50, false), 5 * SECOND));
  }

  @Test
  void clockIsHoursMinutesSeconds() {
    assertEquals("0:00:00", SortProgress.clock(-5));
    assertEquals("1:02:05", SortProgress.clock(3725 * SECOND + 999_999_999L));
    assertEquals("27:46:40", SortProgress.clock(100_000 * SECOND));
  }

  // ---------------------------------------------------------------- the listener in Spark

  @Test
  void countsTheRowsOfASortFromItsTasks() throws IOException {
    SparkSession spark = SharedSpark.get();
    Path in = writeInput();
    Path out = Files.createDirectory(tmp.resolve("out"));
    Configuration conf = spark.sparkContext().hadoopConfiguration();
    ByteArrayOutputStream printed = new ByteArrayOutputStream();

    SortProgress.Counts counts;
    try (PrintStream sink = new PrintStream(printed, true, StandardCharsets.UTF_8);
         SortProgress progress = SortProgress.start(spark.sparkContext(), sink,
             Work.sort(ROWS, (long) ROWS * TeraRecords.RECORD_BYTES), 3_600_000)) {
      TeraFiles.write(TeraFiles.read(spark, TeraFilesTest.hadoopPath(in))
          .transform(GpuSort.<Row>byKey(col("key"))), TeraFilesTest.hadoopPath(out), conf);
      WriteCapture.awaitListeners(spark);
      counts = progress.counts();
    }
    assertEquals(ROWS, counts.read(), counts.toString());
    assertEquals(ROWS, counts.sorted(), counts.toString());
    assertEquals(ROWS, counts.written(), counts.toString());
    assertTrue(counts.mapSideDone(), counts.toString());
    // Hadoop's count of the bytes read may include more than the records (buffers, checksums).
    assertTrue(counts.bytesRead() >= (long) ROWS * TeraRecords.RECORD_BYTES, counts.toString());
    assertEquals("", printed.toString(StandardCharsets.UTF_8), "nothing within an hour");
  }

  @Test
  void fileSortPrintsProgressLinesUnlessQuiet() throws IOException {
    Path in = writeInput();
    Result r = execute("--input", in.toString(), "--format", "terasort", "--output",
        tmp.resolve("out").toString(), "--progress-interval", "0.02");
    assertEquals(FileSort.EXIT_OK, r.exitCode(), r.printed());
    List<String> lines = r.out().lines().toList();
    long progressLines = lines.stream().filter(l -> l.startsWith("FileSort: progress ")).count();
    assertTrue(progressLines >= 1, r.printed());
    assertFalse(r.out().contains("\r"), "one line at a time");
    assertTrue(lines.get(lines.size() - 2).startsWith("FileSort: sorted 50,000 rows"),
        "the summary comes after the last progress line\n" + r.printed());

    Result quiet = execute("--input", in.toString(), "--format", "terasort", "--output",
        tmp.resolve("quiet").toString(), "--progress-interval", "0.02", "--quiet");
    assertEquals(FileSort.EXIT_OK, quiet.exitCode(), quiet.printed());
    assertFalse(quiet.out().contains("progress"), quiet.printed());
    assertEquals(2, quiet.out().lines().count(), quiet.printed());
  }

  /** {@link #ROWS} generated records in one file of a directory of their own. */
  private Path writeInput() throws IOException {
    Path dir = Files.createDirectory(tmp.resolve("in"));
    TeraFilesTest.writeRecords(dir.resolve("part-00000"), 0, ROWS);
    return dir;
  }
}
