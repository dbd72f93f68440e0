package io.gpusort.engine.cuda;

import static jcuda.driver.JCudaDriver.cuEventCreate;
import static jcuda.driver.JCudaDriver.cuEventDestroy;
import static jcuda.driver.JCudaDriver.cuEventRecord;
import static jcuda.driver.JCudaDriver.cuEventSynchronize;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoDAsync;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoHAsync;
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
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import jcuda.driver.CUevent;
import jcuda.driver.CUevent_flags;
import jcuda.driver.CUresult;
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
 * <p>Rows may also come through the intake's staging buffers ({@link #send}), their pages left
 * unwritten: the device then holds the only copy of those rows until the gather's copy back writes
 * the sorted stream into the pages, or {@link #restorePages} (or {@link #restoreFrom}, once the
 * gather holds the buffer) copies them back where the host must read them first.
 *
 * <p>It holds at most half the device budget with every other sort's memory counted, so that it
 * never starves a sort; past that, or for a page that is not page-locked, it brings back the rows
 * only it holds, stops and frees what it holds, and the gather sends every page itself.
 */
final class CudaRowUpload implements RowUpload {
  private static final Logger LOG = LoggerFactory.getLogger(CudaRowUpload.class);
  /** The device buffer's first size; it doubles from there. */
  private static final long FIRST_BUFFER_BYTES = 4L << 20;

  final CudaDevice device;
  private final CUstream stream = new CUstream();
  private final List<HostBuffer> pages = new ArrayList<>();
  private long[] pageBytes = new long[16];
  /** Whether page k's bytes came from elsewhere and the page does not hold them yet. */
  private boolean[] staged = new boolean[16];
  private int stagedPages;
  /** Per staging buffer, the event after the last copy that reads it. */
  private final Map<HostBuffer, CUevent> reads = new IdentityHashMap<>();
  private boolean streamCreated;
  private DeviceBuffer buffer;
  private long usedBytes;
  private boolean stopped;
  /** Staged rows that could not be brought back: the run's rows are lost. */
  private String lost;

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
    if (copy(page.address(), bytes)) {
      addPage(page);
      pageBytes[pages.size() - 1] = bytes;
    }
  }

  @Override
  public boolean takesStagedRows() {
    return true;
  }

  @Override
  public boolean canSendFrom(HostBuffer source) {
    return source.isPinned();
  }

  @Override
  public boolean send(HostBuffer page, long offset, HostBuffer source, long sourceOffset,
      long bytes) {
    if (stopped) {
      checkNotLost();
      return false;
    }
    int last = pages.size() - 1;
    boolean next = last < 0 || pages.get(last) != page;
    if (next ? offset != 0 : offset != pageBytes[last]) {
      throw new IllegalArgumentException("a stretch at " + offset + " of a page holding "
          + (next ? 0 : pageBytes[last]) + " bytes");
    }
    if (!source.isPinned()) {
      stopQuietly("a staging buffer is not page-locked");
      checkNotLost();
      return false;
    }
    if (!copy(source.address() + sourceOffset, bytes)) {
      checkNotLost();
      return false;
    }
    if (next) {
      addPage(page);
    }
    int k = pages.size() - 1;
    pageBytes[k] += bytes;
    if (source != page && !staged[k]) {
      staged[k] = true;
      stagedPages++;
    }
    try {
      CUevent read = reads.get(source);
      if (read == null) {
        read = new CUevent();
        Cuda.check(cuEventCreate(read, CUevent_flags.CU_EVENT_DISABLE_TIMING), "cuEventCreate");
        reads.put(source, read);
      }
      Cuda.check(cuEventRecord(read, stream), "cuEventRecord");
    } catch (RuntimeException e) {
      // The copy is enqueued; without its event the buffer may be reused only after a wait.
      stopQuietly(e.toString());
      checkNotLost();
    }
    return true;
  }

  @Override
  public void awaitRead(HostBuffer source) {
    CUevent read = reads.get(source);
    if (read == null) {
      return;
    }
    device.makeCurrent();
    int result = cuEventSynchronize(read);
    if (result != CUresult.CUDA_SUCCESS) {
      // The copy failed or the device did: nothing reads the buffer once the stream is done.
      cuStreamSynchronize(stream);
    }
  }

  /** Enqueues a copy of {@code bytes} at {@code address} to the end of the buffer; false: stopped. */
  private boolean copy(long address, long bytes) {
    try {
      device.makeCurrent();
      if (!streamCreated) {
        Cuda.check(cuStreamCreate(stream, CUstream_flags.CU_STREAM_NON_BLOCKING),
            "cuStreamCreate");
        streamCreated = true;
      }
      if (!reserve(usedBytes + bytes)) {
        return false;
      }
      Cuda.check(cuMemcpyHtoDAsync(buffer.at(usedBytes), new NativePointer(address), bytes,
          stream), "cuMemcpyHtoDAsync", bytes + " bytes of rows");
    } catch (RuntimeException e) {
      stopQuietly(e.toString());
      return false;
    }
    usedBytes += bytes;
    return true;
  }

  private void addPage(HostBuffer page) {
    if (pages.size() == pageBytes.length) {
      pageBytes = Arrays.copyOf(pageBytes, 2 * pageBytes.length);
      staged = Arrays.copyOf(staged, 2 * staged.length);
    }
    pageBytes[pages.size()] = 0;
    staged[pages.size()] = false;
    pages.add(page);
  }

  @Override
  public void restorePages() {
    checkNotLost();
    if (stagedPages == 0) {
      return;
    }
    if (buffer == null) {
      lost = "the device buffer holding them was given up";
      checkNotLost();
    }
    restoreFrom(buffer);
  }

  /**
   * Copies the staged pages' bytes back from {@code in}, which holds every page sent, packed back
   * to back (this upload's buffer, or the one {@link #completeFor} handed over), and waits.
   *
   * @throws IllegalStateException where the device fails: the rows are lost
   */
  void restoreFrom(DeviceBuffer in) {
    checkNotLost();
    if (stagedPages == 0) {
      return;
    }
    try {
      device.makeCurrent();
      // Copies into the buffer (this stream's) must be done before it is read back.
      Cuda.check(cuStreamSynchronize(stream), "cuStreamSynchronize");
      long base = 0;
      for (int k = 0; k < pages.size(); k++) {
        if (staged[k]) {
          Cuda.check(cuMemcpyDtoHAsync(new NativePointer(pages.get(k).address()), in.at(base),
              pageBytes[k], stream), "cuMemcpyDtoHAsync", pageBytes[k] + " bytes of rows");
        }
        base += pageBytes[k];
      }
      Cuda.check(cuStreamSynchronize(stream), "cuStreamSynchronize");
    } catch (RuntimeException e) {
      lost = e.toString();
      throw new IllegalStateException("the device failed while bringing back rows it alone held; "
          + "the sort's rows are lost", e);
    }
    Arrays.fill(staged, false);
    stagedPages = 0;
  }

  private void checkNotLost() {
    if (lost != null) {
      throw new IllegalStateException("rows held only on the device were lost: " + lost);
    }
  }

  @Override
  public int numPages() {
    return stopped ? 0 : pages.size();
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
    checkNotLost();
    if (stopped || !isPrefixOf(rows)) {
      if (stagedPages > 0) {
        throw new IllegalStateException("rows held only on the device are not the run's first "
            + "pages");
      }
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
    // The pages stay known: a gather that fails before its copies back brings staged rows back
    // from the buffer handed over (restoreFrom).
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
    DeviceBuffer grown = pool.allocate(size, DeviceFaults.Phase.UPLOAD);
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
    try {
      if (stagedPages > 0 && buffer != null) {
        restoreFrom(buffer);
      }
    } finally {
      release();
    }
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
      for (CUevent read : reads.values()) {
        cuEventDestroy(read);
      }
      reads.clear();
      pages.clear();
      if (streamCreated) {
        cuStreamDestroy(stream);
        streamCreated = false;
      }
    }
  }
}
