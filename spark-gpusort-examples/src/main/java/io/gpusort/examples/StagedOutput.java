package io.gpusort.examples;

import java.io.IOException;
import java.util.UUID;
import org.apache.hadoop.fs.FileAlreadyExistsException;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * An output directory that is written under a hidden temporary name next to its final place
 * ({@code parent/.name.tmp-<uuid>}) and renamed into place by {@link #commit} only when complete,
 * so that a failed or killed job never leaves a directory at the final path that looks finished.
 * Hadoop and Spark readers skip names starting with {@code .}, so a leftover staging directory is
 * not read as data.
 *
 * <p>{@link #close()} deletes the staging directory unless it was committed; it is idempotent.
 */
final class StagedOutput implements AutoCloseable {
  private final FileSystem fs;
  private final Path target;
  private final Path staging;
  private boolean committed;
  private boolean closed;

  private StagedOutput(FileSystem fs, Path target, Path staging) {
    this.fs = fs;
    this.target = target;
    this.staging = staging;
  }

  /** Stages a write to {@code target}, an absolute path of {@code fs} that has a parent. */
  static StagedOutput create(FileSystem fs, Path target) throws IOException {
    Path parent = target.getParent();
    if (parent == null) {
      throw new IOException("output cannot be the root directory: " + target);
    }
    // Rename needs the parent to exist; Spark would create it for the staging directory anyway.
    fs.mkdirs(parent);
    return new StagedOutput(fs, target,
        new Path(parent, "." + target.getName() + ".tmp-" + UUID.randomUUID()));
  }

  /** Where the job writes; it must not exist yet. */
  Path stagingPath() {
    return staging;
  }

  /**
   * Moves the staging directory to the target. An existing target is an error unless
   * {@code replaceExisting}, in which case it is deleted first: Hadoop's rename would otherwise
   * move the staging directory inside it.
   */
  void commit(boolean replaceExisting) throws IOException {
    if (fs.exists(target)) {
      if (!replaceExisting) {
        throw new FileAlreadyExistsException("output already exists: " + target);
      }
      if (!fs.delete(target, true)) {
        throw new IOException("could not delete the existing output " + target);
      }
    }
    if (!fs.rename(staging, target)) {
      throw new IOException("could not rename " + staging + " to " + target);
    }
    committed = true;
  }

  @Override
  public void close() throws IOException {
    if (closed) {
      return;
    }
    closed = true;
    if (!committed && fs.exists(staging)) {
      fs.delete(staging, true);
    }
  }
}
