package io.gpusort.examples;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.util.Locale;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.JobContext;
import org.apache.hadoop.mapreduce.RecordWriter;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.lib.output.FileOutputFormat;
import org.apache.hadoop.mapreduce.lib.output.PathOutputCommitter;

/**
 * Writes TeraSort records, each a 10-byte key and a 90-byte value written as they are, one file
 * per task named {@code part-NNNNN} by the task's partition ({@code part-00000},
 * {@code part-00001}, ...), so that the names order the files as the partitions are ordered.
 * Files are written through the job's output committer: each task attempt writes under its own
 * temporary path and the committer moves the file of the attempt that succeeded into place, so
 * retried and speculative tasks leave one file a partition. Every partition writes its file, an
 * empty partition an empty file. No compression, whatever the job's configuration says.
 *
 * <p>For Spark's {@code saveAsNewAPIHadoopFile} with key and value classes {@code byte[]}: each
 * pair a record, or, with an empty value, a block of records one after another in the key (a
 * whole number of 100-byte records), which saves the writer's per-pair work (and Spark's check of
 * the bytes written, every 256 pairs) on each record; any other lengths fail the task. The arrays
 * are written before {@code write} returns, so a caller may reuse them.
 */
public final class TeraOutputFormat extends FileOutputFormat<byte[], byte[]> {
  /**
   * The most files whose names {@code part-%05d} sort in partition order: a sixth digit would
   * put {@code part-100000} before {@code part-20000}.
   */
  static final int MAX_FILES = 100_000;

  /** Bytes buffered before a write to the file system's stream. */
  private static final int BUFFER_BYTES = 1 << 20;

  /** The failure of a record whose key and value are {@code keyBytes} and {@code valueBytes}. */
  static String shapeError(int keyBytes, int valueBytes) {
    return "a terasort record is a " + TeraRecords.KEY_BYTES + "-byte key and a "
        + TeraRecords.VALUE_BYTES + "-byte value, not " + keyBytes + " and " + valueBytes
        + " bytes";
  }

  /** The name of partition {@code partition}'s file. */
  static String fileName(int partition) {
    if (partition < 0 || partition >= MAX_FILES) {
      throw new IllegalArgumentException("terasort output has at most " + MAX_FILES
          + " files, named part-00000 to part-99999; partition " + partition + " is beyond");
    }
    return String.format(Locale.ROOT, "part-%05d", partition);
  }

  @Override
  public RecordWriter<byte[], byte[]> getRecordWriter(TaskAttemptContext context)
      throws IOException {
    Path file = getDefaultWorkFile(context, "");
    OutputStream out = file.getFileSystem(context.getConfiguration()).create(file, false);
    return new RecordsWriter(new BufferedOutputStream(out, BUFFER_BYTES));
  }

  /** {@code part-NNNNN} in the committer's work directory of this task attempt. */
  @Override
  public Path getDefaultWorkFile(TaskAttemptContext context, String extension)
      throws IOException {
    PathOutputCommitter committer = (PathOutputCommitter) getOutputCommitter(context);
    int partition = context.getTaskAttemptID().getTaskID().getId();
    return new Path(committer.getWorkPath(), fileName(partition) + extension);
  }

  /**
   * Requires an output path, but, unlike Hadoop's check, accepts one that exists: FileSort
   * writes into a staging directory it has just made empty (see {@link StagedOutput}).
   */
  @Override
  public void checkOutputSpecs(JobContext job) throws IOException {
    if (getOutputPath(job) == null) {
      throw new IOException("no output directory set for the terasort output");
    }
  }

  private static final class RecordsWriter extends RecordWriter<byte[], byte[]> {
    private final OutputStream out;

    RecordsWriter(OutputStream out) {
      this.out = out;
    }

    @Override
    public void write(byte[] key, byte[] value) throws IOException {
      if (value.length == 0 && key.length % TeraRecords.RECORD_BYTES == 0) {
        out.write(key);
        return;
      }
      if (key.length != TeraRecords.KEY_BYTES || value.length != TeraRecords.VALUE_BYTES) {
        throw new IOException(shapeError(key.length, value.length));
      }
      out.write(key);
      out.write(value);
    }

    @Override
    public void close(TaskAttemptContext context) throws IOException {
      out.close();
    }
  }
}
