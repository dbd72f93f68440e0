package io.gpusort.spill;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;

/**
 * One file of spilled rows on local disk. The streams it opens apply whatever the store does to
 * spilled bytes (Spark's compression codec and I/O encryption, for the Spark store), so a writer
 * and a reader of the same file need not know about it.
 */
public interface SpillFile {
  /** A new stream that writes the file from its start; the caller closes it. */
  OutputStream openForWrite() throws IOException;

  /** A new stream that reads the file from its start; the caller closes it. */
  InputStream openForRead() throws IOException;

  /** Bytes the file takes on disk now. */
  long sizeOnDiskBytes();

  /** Deletes the file; idempotent, and never throws. */
  void delete();
}
