package io.gpusort.examples;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.io.BytesWritable;
import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.mapreduce.InputSplit;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.RecordReader;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.lib.input.FileInputFormat;
import org.apache.hadoop.mapreduce.lib.input.FixedLengthInputFormat;
import org.apache.hadoop.mapreduce.lib.input.FixedLengthRecordReader;

/**
 * Hadoop's {@link FixedLengthInputFormat} for 100-byte TeraSort records, whatever the job's
 * configuration says the record length is. Files are split as any Hadoop file is (at most
 * {@code mapreduce.input.fileinputformat.split.maxsize} bytes and at most a block a split) and
 * each split reads the records that start in it, so a record is read exactly once however the
 * splits fall. The files read are those Hadoop lists: a file, the files directly in a directory,
 * or a glob's matches, skipping names that start with {@code _} or {@code .} (such as
 * {@code _SUCCESS} and checksum files) and, here, subdirectories.
 *
 * <p>Spark reads these files through {@link TeraSortSource}, which lists them here ({@link
 * #inputFiles}) and checks them ({@link #partialRecordError}); this class remains the format for
 * a Hadoop job.
 *
 * <p>Hadoop reports a file whose length is not a whole number of records only when the split
 * with its end is read ("Partial record found at the end of split", without the file's name);
 * {@link #inputFiles} and {@link #partialRecordError} find it before any task runs.
 */
public final class TeraInputFormat extends FixedLengthInputFormat {
  /** Hadoop's switch for skipping, rather than failing on, directories inside an input dir. */
  private static final String IGNORE_SUBDIRS =
      "mapreduce.input.fileinputformat.input.dir.nonrecursive.ignore.subdirs";

  @Override
  public RecordReader<LongWritable, BytesWritable> createRecordReader(InputSplit split,
      TaskAttemptContext context) {
    return new FixedLengthRecordReader(TeraRecords.RECORD_BYTES);
  }

  /** A job configuration, copied from {@code conf}, that reads {@code input} with this format. */
  static Configuration jobConf(Configuration conf, Path input) throws IOException {
    Job job = Job.getInstance(conf);
    // The Path overload: the String one would split a path containing a comma.
    FileInputFormat.setInputPaths(job, input);
    job.getConfiguration().setBoolean(IGNORE_SUBDIRS, true);
    FixedLengthInputFormat.setRecordLength(job.getConfiguration(), TeraRecords.RECORD_BYTES);
    return job.getConfiguration();
  }

  /**
   * The files this format reads for {@code input}, in path order (for a directory, name order).
   *
   * @throws IOException if {@code input} matches nothing, as Hadoop's listing reports it
   */
  static List<FileStatus> inputFiles(Configuration conf, Path input) throws IOException {
    List<FileStatus> files = new ArrayList<>();
    for (FileStatus status : new TeraInputFormat().listStatus(
        Job.getInstance(jobConf(conf, input)))) {
      if (!status.isDirectory()) {
        files.add(status);
      }
    }
    files.sort(Comparator.comparing(f -> f.getPath().toString()));
    return files;
  }

  /**
   * A one-line error naming the first of {@code files} whose length is not a whole number of
   * 100-byte records, or null if every length is.
   */
  static String partialRecordError(List<FileStatus> files) {
    for (FileStatus file : files) {
      long partialBytes = file.getLen() % TeraRecords.RECORD_BYTES;
      if (partialBytes != 0) {
        return String.format(Locale.ROOT, "%s has %,d bytes, not a whole number of %d-byte "
            + "terasort records (%d bytes left over)", file.getPath(), file.getLen(),
            TeraRecords.RECORD_BYTES, partialBytes);
      }
    }
    return null;
  }

  /** The bytes of {@code files} together. */
  static long totalBytes(List<FileStatus> files) {
    return files.stream().mapToLong(FileStatus::getLen).sum();
  }
}
