package io.gpusort.examples;

import io.gpusort.examples.FileSortArgs.UsageException;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.Serializable;
import java.math.BigInteger;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.util.SerializableConfiguration;

/**
 * FileSort's {@code --validate}: checks that TeraSort files are globally sorted and counts and
 * checksums their records ({@link TeraChecksum}), as valsort does for one file. The files are
 * those {@link TeraInputFormat} lists (a directory's files, skipping {@code _SUCCESS} and hidden
 * ones), taken in path order, which for a directory of {@code part-NNNNN} files is the order of
 * the partitions. One Spark task reads each file whole, in order; the driver then checks the
 * files against each other: the first key of each non-empty file at least the last key of the
 * non-empty file before it.
 *
 * <p>Any failure is a {@link ValidationException} whose message is one line: the first record out
 * of order (its file, its index in the file from 0, its key and the key before it), a file that
 * ends in a partial record, or the checksum that differs from the input's.
 */
final class TeraValidate {
  /** Records each task reads at a time: a megabyte. */
  private static final int RECORDS_PER_READ = 10_000;

  private TeraValidate() {}

  /** The output failed validation; the message says how, in one line. */
  static final class ValidationException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    ValidationException(String message) {
      super(message);
    }
  }

  /**
   * One file as its task found it: count and checksum, first and last key (null if empty), the
   * index of its first record whose key is below the one before it (-1 if none) with those two
   * keys, and the records whose key equals the one before.
   */
  record FileSummary(String path, TeraChecksum checksum, byte[] firstKey, byte[] lastKey,
      long firstDisorder, byte[] disorderKey, byte[] previousKey, long duplicateKeys)
      implements Serializable {
    long records() {
      return checksum.records();
    }
  }

  /** All files together: records and checksum, duplicate keys, files. */
  record Totals(TeraChecksum checksum, long duplicateKeys, int files) {}

  /**
   * Validates {@code args.validate()} and, if asked, compares its checksum with the input's or
   * the expected one; returns the exit code, {@link FileSort#EXIT_OK}, or throws
   * {@link ValidationException}.
   */
  static int run(SparkSession spark, FileSortArgs args, PrintStream out) throws IOException {
    Configuration conf = spark.sparkContext().hadoopConfiguration();
    Path output = existing(args.validate(), "--validate", conf);
    Path input = args.inputChecksumOf() == null ? null
        : existing(args.inputChecksumOf(), "--input-checksum-of", conf);

    long start = System.nanoTime();
    Totals totals = check(summarize(spark, output, conf));
    out.printf(Locale.ROOT, "FileSort: validated %s: %,d records in %d files in order, %,d "
        + "duplicate keys, checksum %s (%.2f s)%n", output, totals.checksum().records(),
        totals.files(), totals.duplicateKeys(), totals.checksum().sumHex(),
        ExampleRuntime.seconds(System.nanoTime() - start));

    if (input != null) {
      TeraChecksum expected = total(summarize(spark, input, conf));
      if (!expected.equals(totals.checksum())) {
        throw new ValidationException("checksum mismatch: " + output + " has "
            + totals.checksum() + " but the input " + input + " has " + expected);
      }
      out.printf(Locale.ROOT, "FileSort: same records as %s: %s%n", input, expected);
    } else if (args.expectChecksum() != null) {
      BigInteger expected = args.expectChecksum();
      if (!expected.equals(totals.checksum().sum())) {
        throw new ValidationException("checksum mismatch: " + output + " has "
            + totals.checksum() + ", expected checksum " + expected.toString(16));
      }
      out.printf(Locale.ROOT, "FileSort: checksum %s as expected%n", expected.toString(16));
    }
    return FileSort.EXIT_OK;
  }

  private static Path existing(String path, String option, Configuration conf)
      throws IOException {
    Path qualified = FileSort.qualify(path, conf);
    if (!FileSort.exists(qualified, conf)) {
      throw new UsageException(option + " path not found: " + qualified);
    }
    return qualified;
  }

  /**
   * One summary per file under {@code path}, in path order, from one task per file.
   *
   * @throws ValidationException if a file's length is not a whole number of records
   */
  static List<FileSummary> summarize(SparkSession spark, Path path, Configuration conf)
      throws IOException {
    List<FileStatus> files = TeraInputFormat.inputFiles(conf, path);
    String partial = TeraInputFormat.partialRecordError(files);
    if (partial != null) {
      throw new ValidationException(partial);
    }
    if (files.isEmpty()) {
      return List.of();
    }
    JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
    Broadcast<SerializableConfiguration> taskConf =
        jsc.broadcast(new SerializableConfiguration(conf));
    List<String> paths = files.stream().map(f -> f.getPath().toString()).toList();
    // As many slices as files: one file a task; collect keeps their order.
    return jsc.parallelize(paths, paths.size())
        .map(file -> summarizeFile(new Path(file), taskConf.value().value()))
        .collect();
  }

  /**
   * The files' totals, after checking their order against each other.
   *
   * @throws ValidationException naming the first record out of order
   */
  static Totals check(List<FileSummary> files) {
    TeraChecksum checksum = TeraChecksum.EMPTY;
    long duplicates = 0;
    FileSummary previous = null;
    for (FileSummary file : files) {
      checksum = checksum.plus(file.checksum());
      duplicates += file.duplicateKeys();
      if (file.records() == 0) {
        continue;
      }
      if (previous != null) {
        int order = TeraRecords.compareKeys(file.firstKey(), 0, previous.lastKey(), 0);
        if (order < 0) {
          throw outOfOrder(file.path(), 0, file.firstKey(),
              "the last record of " + previous.path(), previous.lastKey());
        }
        duplicates += order == 0 ? 1 : 0;
      }
      if (file.firstDisorder() >= 0) {
        throw outOfOrder(file.path(), file.firstDisorder(), file.disorderKey(),
            "record " + (file.firstDisorder() - 1), file.previousKey());
      }
      previous = file;
    }
    return new Totals(checksum, duplicates, files.size());
  }

  /** The count and checksum of all files, whatever their order. */
  static TeraChecksum total(List<FileSummary> files) {
    return files.stream().map(FileSummary::checksum)
        .reduce(TeraChecksum.EMPTY, TeraChecksum::plus);
  }

  private static ValidationException outOfOrder(String file, long index, byte[] key,
      String before, byte[] beforeKey) {
    return new ValidationException(String.format(Locale.ROOT, "out of order: record %,d of %s "
        + "(key %s) sorts before %s (key %s)", index, file, TeraRecords.keyHex(key, 0), before,
        TeraRecords.keyHex(beforeKey, 0)));
  }

  /** Reads {@code path} front to back: its summary. */
  static FileSummary summarizeFile(Path path, Configuration conf) throws IOException {
    byte[] buffer = new byte[RECORDS_PER_READ * TeraRecords.RECORD_BYTES];
    byte[] previous = new byte[TeraRecords.KEY_BYTES];
    TeraChecksum.Builder checksum = new TeraChecksum.Builder();
    byte[] first = null;
    long index = 0;
    long firstDisorder = -1;
    byte[] disorderKey = null;
    byte[] previousKey = null;
    long duplicates = 0;
    try (InputStream in = path.getFileSystem(conf).open(path)) {
      int filled;
      while ((filled = readFully(in, buffer)) > 0) {
        if (filled % TeraRecords.RECORD_BYTES != 0) {
          throw new IOException(path + " ends in a partial record");
        }
        for (int offset = 0; offset < filled; offset += TeraRecords.RECORD_BYTES, index++) {
          if (index == 0) {
            first = Arrays.copyOfRange(buffer, offset, offset + TeraRecords.KEY_BYTES);
          } else {
            int order = TeraRecords.compareKeys(buffer, offset, previous, 0);
            if (order < 0 && firstDisorder < 0) {
              firstDisorder = index;
              disorderKey = Arrays.copyOfRange(buffer, offset, offset + TeraRecords.KEY_BYTES);
              previousKey = previous.clone();
            }
            duplicates += order == 0 ? 1 : 0;
          }
          System.arraycopy(buffer, offset, previous, 0, TeraRecords.KEY_BYTES);
          checksum.add(buffer, offset);
        }
      }
    }
    return new FileSummary(path.toString(), checksum.build(), first,
        index > 0 ? previous : null, firstDisorder, disorderKey, previousKey, duplicates);
  }

  /** Fills {@code buffer} from {@code in} up to its end or the stream's; returns the bytes read. */
  private static int readFully(InputStream in, byte[] buffer) throws IOException {
    int filled = 0;
    while (filled < buffer.length) {
      int n = in.read(buffer, filled, buffer.length - filled);
      if (n < 0) {
        break;
      }
      filled += n;
    }
    return filled;
  }
}
