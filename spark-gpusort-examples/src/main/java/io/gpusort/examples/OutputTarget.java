package io.gpusort.examples;

import io.gpusort.examples.FileSortArgs.UsageException;
import java.io.IOException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * The {@code --output} of a FileSort mode that writes, checked before any work: a qualified path
 * that is not the input and, unless overwriting, does not exist.
 *
 * @param fs the output's file system
 * @param path the output, qualified
 */
record OutputTarget(FileSystem fs, Path path) {
  /**
   * Checks {@code output}; throws {@link UsageException} if it is the path {@code input} (null
   * when there is none) or exists and {@code overwrite} is false.
   */
  static OutputTarget of(Configuration conf, String output, boolean overwrite, Path input)
      throws IOException {
    Path path = FileSort.qualify(output, conf);
    FileSystem fs = path.getFileSystem(conf);
    if (path.equals(input)) {
      throw new UsageException("--output is the same path as --input: " + path);
    }
    if (!overwrite && fs.exists(path)) {
      throw new UsageException("output already exists: " + path + " (--overwrite replaces it)");
    }
    return new OutputTarget(fs, path);
  }

  /**
   * Stages the output, which proves that it can be written (see {@link StagedOutput#create}),
   * before any input is read: an unwritable location is then a usage error found at once, not a
   * failed write after the whole read and sort.
   */
  StagedOutput stage() {
    try {
      return StagedOutput.create(fs, path);
    } catch (IOException e) {
      throw new UsageException("cannot write the output at " + path + ": "
          + FileSort.rootCauseLine(e), e);
    }
  }
}
