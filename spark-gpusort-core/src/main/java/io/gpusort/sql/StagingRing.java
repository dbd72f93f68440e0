package io.gpusort.sql;

import io.gpusort.engine.RowUpload;
import io.gpusort.memory.HostBuffer;

/**
 * The intake's way to the device on a GPU engine: a few small page-locked buffers, used in turn,
 * into which the rows are written and from which each stretch of rows is sent to the device
 * ({@link RowUpload#send}). The buffers stay in the CPU's cache, so a row's copy costs no write to
 * memory; the pages the rows belong to are written by the device's copy back of the sorted rows
 * (or by {@link RowUpload#restorePages} where the host must read the rows first).
 *
 * <p>Measured on the H200 host (16 threads, 136-byte rows, {@code RowCopyBenchmark}): 13.8 ns a
 * row into a 2 MB ring against 40.3 ns into the pages themselves.
 *
 * <p>Its buffers are counted in the task's {@link SortMemory}, taken as the pages grow to their
 * size, and given back only once no copy reads them. Used by the task's thread.
 */
final class StagingRing implements AutoCloseable {
  /** Buffers used in turn: a stretch is written while the ones before it are copied. */
  static final int BUFFERS = 4;

  private final SortMemory memory;
  private final RowUpload upload;
  private final long bufferBytes;
  private final HostBuffer[] buffers = new HostBuffer[BUFFERS];
  private int next;
  private boolean failed;

  /** Buffers of {@code totalBytes / BUFFERS} bytes at most, sent through {@code upload}. */
  StagingRing(SortMemory memory, RowUpload upload, long totalBytes) {
    this.memory = memory;
    this.upload = upload;
    this.bufferBytes = Math.max(8, (totalBytes / BUFFERS) & ~7L);
  }

  /** The largest stretch a buffer takes. */
  long bufferBytes() {
    return bufferBytes;
  }

  /**
   * The next buffer, of at least {@code needed} bytes and as large as the ring's buffers or
   * {@code roomInPage}, whichever is smaller, once no copy reads it; null where {@code needed}
   * is larger than a buffer, or where no memory the upload can send from could be had ({@link
   * #failed} from then on).
   */
  HostBuffer next(long roomInPage, long needed) {
    if (failed || needed > bufferBytes) {
      return null;
    }
    long size = Math.max(needed, Math.min(bufferBytes, roomInPage));
    int i = next;
    HostBuffer buffer = buffers[i];
    if (buffer != null) {
      upload.awaitRead(buffer);
      if (buffer.sizeBytes() < size) {
        buffers[i] = null;
        memory.releaseNative(buffer);
        buffer = null;
      }
    }
    if (buffer == null) {
      buffer = memory.tryAcquireNative(size);
      if (buffer == null || !upload.canSendFrom(buffer)) {
        // Refused, or memory the device cannot copy while the task goes on (not page-locked).
        if (buffer != null) {
          memory.releaseNative(buffer);
        }
        failed = true;
        return null;
      }
      buffers[i] = buffer;
    }
    next = (i + 1) % BUFFERS;
    return buffer;
  }

  /** Whether no buffer could be had: the rows are then written in their pages and sent from there. */
  boolean failed() {
    return failed;
  }

  /** Sends a stretch: {@link RowUpload#send}. */
  boolean send(HostBuffer page, long offset, HostBuffer source, long sourceOffset, long bytes) {
    return upload.send(page, offset, source, sourceOffset, bytes);
  }

  /** Gives the buffers back once no copy reads them; idempotent. */
  @Override
  public void close() {
    for (int i = 0; i < BUFFERS; i++) {
      HostBuffer buffer = buffers[i];
      if (buffer != null) {
        buffers[i] = null;
        try {
          upload.awaitRead(buffer);
        } finally {
          memory.releaseNative(buffer);
        }
      }
    }
  }
}
