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
 * <p>{@link #create} makes the staging directory and proves it writable, so that an unwritable
 * location is found before any work is done. {@link #close()} deletes the staging directory
 * unless it was committed; it is idempotent.
 */
final class StagedOutput implements AutoCloseable {
  /** An empty file written into the staging directory and deleted again; readers skip "_". */
  static final String PROBE_NAME = "_write_probe";

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

  /**
   * Stages a write to {@code target}, an absolute path of {@code fs} that has a parent, and
   * proves that it can be written: creates the parent (and its missing ancestors), then the
   * staging directory, then writes and deletes an empty probe file in it. Throws the
   * {@link IOException} of the first step that fails, such as "Mkdirs failed to create ..." or
   * one naming "Permission denied", and then leaves no staging directory behind; parent
   * directories it created stay.
   */
  static StagedOutput create(FileSystem fs, Path target) throws IOException {
    Path parent = target.getParent();
    if (parent == null) {
      throw new IOException("output cannot be the root directory: " + target);
    }
    StagedOutput staged = new StagedOutput(fs, target,
        new Path(parent, "." + target.getName() + ".tmp-" + UUID.randomUUID()));
    try {
      // Rename needs the parent to exist.
      mkdirs(fs, parent);
      mkdirs(fs, staged.staging);
      Path probe = new Path(staged.staging, PROBE_NAME);
      fs.create(probe, false).close();
      if (!fs.delete(probe, false)) {
        throw new IOException("could not delete the probe file " + probe);
      }
    } catch (IOException | RuntimeException e) {
      try {
        staged.close();
      } catch (IOException | RuntimeException closing) {
        e.addSuppressed(closing);
      }
      throw e;
    }
    return staged;
  }

  /** Hadoop's {@code mkdirs} reports some failures by returning false instead of throwing. */
  private static void mkdirs(FileSystem fs, Path dir) throws IOException {
    if (!fs.mkdirs(dir)) {
      throw new IOException("Mkdirs failed to create " + dir);
    }
  }

  /** Where the job writes: an empty directory, made by {@link #create}. */
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
