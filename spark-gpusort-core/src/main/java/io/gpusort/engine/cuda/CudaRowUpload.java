package io.gpusort.engine.cuda;

import static jcuda.driver.JCudaDriver.cuEventCreate;
import static jcuda.driver.JCudaDriver.cuEventDestroy;
import static jcuda.driver.JCudaDriver.cuEventRecord;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoDAsync;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoDAsync;
import static jcuda.driver.JCudaDriver.cuStreamCreate;
import static jcuda.driver.JCudaDriver.cuStreamDestroy;
import static jcuda.driver.JCudaDriver.cuStreamSynchronize;
import static jcuda.driver.JCudaDriver.cuStreamWaitEvent;

import io.gpusort.engine.RowPages;
import io.gpusort.engine.RowUpload;
import io.gpusort.memory.HostBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import jcuda.driver.CUevent;
import jcuda.driver.CUevent_flags;
import jcuda.driver.CUstream;
import jcuda.driver.CUstream_flags;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Row pages copied to the device while the run is taken in, on a stream of their own and outside
 * the device's bound on tasks at once (copies wait for no slot; only the gather does). The pages
 * are packed back to back in one device buffer, as {@link DeviceRowGather} lays them out, which
 * doubles (a device-to-device copy) as the run grows.
 *
 * <p>It holds at most half the device budget with every other sort's memory counted, so that it
 * never starves a sort; past that, or for a page that is not page-locked, it stops and frees what
 * it holds, and the gather sends every page itself.
 */
final class CudaRowUpload implements RowUpload {
  private static final Logger LOG = LoggerFactory.getLogger(CudaRowUpload.class);
  /** The device buffer's first size; it doubles from there. */
  private static final long FIRST_BUFFER_BYTES = 4L << 20;

  final CudaDevice device;
  private final CUstream stream = new CUstream();
  private final List<HostBuffer> pages = new ArrayList<>();
  private long[] pageBytes = new long[16];
  private boolean streamCreated;
  private DeviceBuffer buffer;
  private long usedBytes;
  private boolean stopped;

  /** Holds nothing on the device until the first page comes: a small run never sends one. */
  CudaRowUpload(CudaDevice device) {
    this.device = device;
  }

  @Override
  public void add(HostBuffer page, long bytes) {
    if (stopped) {
      return;
    }
    if (!page.isPinned()) {
      stopQuietly("a page is not page-locked");
      return;
    }
    try {
      device.makeCurrent();
      if (!streamCreated) {
        Cuda.check(cuStreamCreate(stream, CUstream_flags.CU_STREAM_NON_BLOCKING),
            "cuStreamCreate");
        streamCreated = true;
      }
      if (!reserve(usedBytes + bytes)) {
        return;
      }
      Cuda.check(cuMemcpyHtoDAsync(buffer.at(usedBytes), new NativePointer(page.address()), bytes,
          stream), "cuMemcpyHtoDAsync", bytes + " bytes of rows");
    } catch (RuntimeException e) {
      stopQuietly(e.toString());
      return;
    }
    if (pages.size() == pageBytes.length) {
      pageBytes = Arrays.copyOf(pageBytes, 2 * pageBytes.length);
    }
    pageBytes[pages.size()] = bytes;
    pages.add(page);
    usedBytes += bytes;
  }

  @Override
  public int numPages() {
    return pages.size();
  }

  /** Device bytes held. */
  long deviceBytes() {
    return buffer == null ? 0 : buffer.sizeBytes();
  }

  /**
   * Sends the pages of {@code rows} not sent yet and makes {@code ws}'s stream wait for every copy;
   * returns the buffer holding all of them packed back to back, now the caller's, or null when the
   * upload stopped or its pages are not the first of {@code rows} (the caller then sends them).
   */
  DeviceBuffer completeFor(RowPages rows, Workspace ws) {
    if (stopped || !isPrefixOf(rows)) {
      return null;
    }
    for (int k = pages.size(); k < rows.numPages() && !stopped; k++) {
      add(rows.page(k), rows.usedBytes(k));
    }
    if (stopped || buffer == null) {
      return null;
    }
    CUevent copied = new CUevent();
    Cuda.check(cuEventCreate(copied, CUevent_flags.CU_EVENT_DISABLE_TIMING), "cuEventCreate");
    try {
      Cuda.check(cuEventRecord(copied, stream), "cuEventRecord");
      Cuda.check(cuStreamWaitEvent(ws.stream, copied, 0), "cuStreamWaitEvent");
    } finally {
      // Released by the driver once the wait is over.
      cuEventDestroy(copied);
    }
    DeviceBuffer handedOver = buffer;
    buffer = null;
    stopped = true;
    pages.clear();
    usedBytes = 0;
    return handedOver;
  }

  private boolean isPrefixOf(RowPages rows) {
    if (pages.size() > rows.numPages()) {
      return false;
    }
    for (int k = 0; k < pages.size(); k++) {
      if (rows.page(k) != pages.get(k) || rows.usedBytes(k) != pageBytes[k]) {
        return false;
      }
    }
    return true;
  }

  /** Grows the device buffer to hold {@code needed} bytes; false (stopped) when it may not. */
  private boolean reserve(long needed) {
    if (buffer != null && buffer.sizeBytes() >= needed) {
      return true;
    }
    long size = Math.max(needed, buffer == null ? FIRST_BUFFER_BYTES : 2 * buffer.sizeBytes());
    DeviceMemoryPool pool = device.memory;
    if (pool.inUseBytes() + DeviceMemoryPool.sizeClass(size) > pool.budgetBytes() / 2) {
      stop("the device budget is half used");
      return false;
    }
    DeviceBuffer grown = pool.allocate(size);
    if (buffer != null) {
      try {
        Cuda.check(cuMemcpyDtoDAsync(grown.pointer(), buffer.pointer(), usedBytes, stream),
            "cuMemcpyDtoDAsync", usedBytes + " bytes of rows");
        Cuda.check(cuStreamSynchronize(stream), "cuStreamSynchronize");
      } catch (RuntimeException e) {
        grown.close();
        throw e;
      }
      buffer.close();
    }
    buffer = grown;
    return true;
  }

  /** As {@link #stop}, for callers that must not fail: the sort goes on without the upload. */
  private void stopQuietly(String why) {
    try {
      stop(why);
    } catch (RuntimeException e) {
      LOG.warn("Stopping a row upload failed", e);
    }
  }

  private void stop(String why) {
    LOG.debug("Row upload stopped after {} pages: {}", pages.size(), why);
    stopped = true;
    release();
  }

  /** Waits for the copies and frees the buffer; the pages are forgotten. */
  private void release() {
    if (streamCreated) {
      device.makeCurrent();
      cuStreamSynchronize(stream);
    }
    if (buffer != null) {
      buffer.close();
      buffer = null;
    }
    pages.clear();
    usedBytes = 0;
  }

  /** Never throws: a device that failed here has failed the sort already, or will. */
  @Override
  public void close() {
    stopped = true;
    try {
      release();
    } catch (RuntimeException e) {
      LOG.warn("Closing a row upload failed", e);
    } finally {
      if (streamCreated) {
        cuStreamDestroy(stream);
        streamCreated = false;
      }
    }
  }
}
