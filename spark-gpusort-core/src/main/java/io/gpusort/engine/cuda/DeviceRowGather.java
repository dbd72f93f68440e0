package io.gpusort.engine.cuda;

import static jcuda.driver.JCudaDriver.cuEventCreate;
import static jcuda.driver.JCudaDriver.cuEventDestroy;
import static jcuda.driver.JCudaDriver.cuEventRecord;

import io.gpusort.engine.EngineTimes;
import io.gpusort.engine.RowArrival;
import io.gpusort.engine.RowPages;
import io.gpusort.memory.HostBuffer;
import io.gpusort.memory.HostMemory;
import java.util.ArrayList;
import java.util.List;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUevent;
import jcuda.driver.CUevent_flags;
import jcuda.driver.JCudaDriver;

/**
 * Puts rows in sorted order on the device (kernels/cuda/rows.cu): the row pages (those a
 * {@link CudaRowUpload} has not sent already), their pointers and the permutation go up, the
 * records are gathered into one stream in permutation order, and the stream comes back over the
 * same pages ({@link RowPages}) while the caller reads it ({@link CudaRowArrival}). Page-locked
 * pages move by DMA with no host copy; others go through the workspace's staging.
 */
final class DeviceRowGather implements AutoCloseable {
  private static final int BLOCK_THREADS = 256;
  /** rows.cu's scan: SCAN_THREADS threads of SCAN_ITEMS values per tile. */
  private static final int SCAN_THREADS = 256;
  private static final int SCAN_TILE = 1024;

  private final Workspace ws;
  private final RowPages rows;
  private final HostBuffer permutation;
  private final int n;
  private final List<DeviceBuffer> owned = new ArrayList<>();

  DeviceRowGather(Workspace ws, RowPages rows, HostBuffer permutation) {
    this.ws = ws;
    this.rows = rows;
    this.permutation = permutation;
    this.n = rows.numRows();
  }

  /** Device bytes a gather of {@code rows} holds at once. */
  static long deviceBytes(RowPages rows) {
    long n = rows.numRows();
    long tiles = (n + SCAN_TILE - 1) / SCAN_TILE;
    boolean fixed = rows.fixedRecordBytes() > 0;
    return 2 * rows.recordBytes() + 8 * n + 4 * n + 8 * n + (fixed ? 0 : 8 * n + 8 * tiles)
        + 8L * rows.numPages() + 64;
  }

  /**
   * Gathers and starts the copies back; returns the stream arriving in the pages, which owns this
   * gather's device buffers from then on. Pages already on the device through {@code upload}
   * (may be null) are not sent again.
   */
  RowArrival run(CudaRowUpload upload) {
    StageClock clock = new StageClock(4);
    boolean handedOver = false;
    DeviceBuffer uploaded = null;
    try {
      clock.mark(0, ws.stream);
      DeviceBuffer in = upload == null ? null : upload.completeFor(rows, ws);
      long[] pageBase;
      if (in != null) {
        uploaded = in;
        owned.add(in);
        pageBase = packedPageBases();
      } else {
        in = allocate(rows.recordBytes());
        pageBase = uploadPages(in);
      }
      CUdeviceptr pointers = upload(rows.pointers(), 8L * n);
      CUdeviceptr perm = upload(permutation, 4L * n);
      CUdeviceptr bases = uploadLongs(pageBase);
      clock.mark(1, ws.stream);
      DeviceBuffer out = allocate(rows.recordBytes());
      gather(in.pointer(), pointers, perm, bases, out.pointer());
      clock.mark(2, ws.stream);
      DeviceFaults.check(DeviceFaults.Phase.DOWNLOAD, rows.recordBytes());
      // Until here the pages are untouched and a failure leaves them as they were (rows they do
      // not hold yet are brought back below); from here the device overwrites them.
      ws.synchronize();
      EngineTimes times = EngineTimes.ofThread();
      times.toDeviceNanos += clock.nanosBetween(0, 1);
      times.gatherNanos += clock.nanosBetween(1, 2);
      RowArrival arrival;
      try {
        arrival = download(out, clock);
      } catch (RuntimeException e) {
        throw new IllegalStateException("the device failed while copying " + n
            + " sorted rows back; the sort's rows are lost", e);
      }
      handedOver = true;
      return arrival;
    } finally {
      if (!handedOver) {
        clock.close();
        try {
          if (uploaded != null) {
            // Rows the pages do not hold yet (staged by the intake) come back before the buffer
            // holding them is freed; the gather's kernels have not written it.
            JCudaDriver.cuStreamSynchronize(ws.stream);
            upload.restoreFrom(uploaded);
          }
        } finally {
          close();
        }
      }
    }
  }

  /** Where each page starts on the device when the pages are packed back to back. */
  private long[] packedPageBases() {
    long[] base = new long[rows.numPages()];
    long at = 0;
    for (int k = 0; k < rows.numPages(); k++) {
      base[k] = at;
      at += rows.usedBytes(k);
    }
    return base;
  }

  /** Uploads each page's records back to back; returns where each page starts on the device. */
  private long[] uploadPages(DeviceBuffer in) {
    long[] base = packedPageBases();
    for (int k = 0; k < rows.numPages(); k++) {
      HostBuffer page = rows.page(k);
      Transfers.upload(ws, page.address(), page.isPinned(), in.at(base[k]), rows.usedBytes(k));
    }
    return base;
  }

  private CUdeviceptr upload(HostBuffer host, long sizeBytes) {
    DeviceBuffer buffer = allocate(sizeBytes);
    Transfers.upload(ws, host.address(), host.isPinned(), buffer.pointer(), sizeBytes);
    return buffer.pointer();
  }

  private CUdeviceptr uploadLongs(long[] values) {
    DeviceBuffer buffer = allocate(8L * values.length);
    // A small plain buffer: staged, so it may be freed as soon as the call returns.
    try (HostBuffer host = HostBuffer.acquire(8L * values.length)) {
      HostMemory.copyFromArray(values, 0, host.address(), values.length);
      Transfers.upload(ws, host.address(), false, buffer.pointer(), 8L * values.length);
      ws.synchronize();
    }
    return buffer.pointer();
  }

  private void gather(CUdeviceptr in, CUdeviceptr pointers, CUdeviceptr perm, CUdeviceptr bases,
      CUdeviceptr out) {
    CudaKernels k = ws.device.kernels;
    int sms = ws.device.multiprocessors;
    CUdeviceptr src = allocate(8L * n).pointer();
    Launch.kernel("rows_source", k.rowsSource, Launch.strideGrid(n, BLOCK_THREADS, sms),
        BLOCK_THREADS, ws.stream, pointers, perm, bases, src, n);
    int fixed = rows.fixedRecordBytes();
    if (fixed > 0) {
      long words = (long) n * (fixed / 8);
      Launch.kernel("rows_gather_fixed", k.rowsGatherFixed,
          Launch.strideGrid(words, BLOCK_THREADS, sms), BLOCK_THREADS, ws.stream, in, src, out, n,
          fixed / 8);
      return;
    }
    CUdeviceptr dst = allocate(8L * n).pointer();
    int tiles = (int) ((n + (long) SCAN_TILE - 1) / SCAN_TILE);
    CUdeviceptr tileSums = allocate(8L * tiles).pointer();
    Launch.kernel("rows_record_bytes", k.rowsRecordBytes, Launch.strideGrid(n, BLOCK_THREADS, sms),
        BLOCK_THREADS, ws.stream, in, src, dst, n);
    Launch.kernel("rows_scan_tiles", k.rowsScanTiles, tiles, SCAN_THREADS, ws.stream, dst,
        tileSums, n);
    Launch.kernel("rows_scan_tile_sums", k.rowsScanTileSums, 1, SCAN_THREADS, ws.stream, tileSums,
        tiles);
    Launch.kernel("rows_scan_apply", k.rowsScanApply, tiles, SCAN_THREADS, ws.stream, dst,
        tileSums, n);
    Launch.kernel("rows_gather_var", k.rowsGatherVar,
        Launch.strideGrid(32L * n, BLOCK_THREADS, sms), BLOCK_THREADS, ws.stream, in, src, dst,
        out, n);
  }

  /**
   * Starts copying the sorted stream back over the pages, each page filled to its capacity, with
   * an event after each page; page-locked pages are copied by DMA without waiting, others through
   * the staging, waited for here.
   */
  private RowArrival download(DeviceBuffer out, StageClock clock) {
    long total = rows.recordBytes();
    List<Long> ends = new ArrayList<>();
    List<CUevent> events = new ArrayList<>();
    try {
      long done = 0;
      for (int k = 0; k < rows.numPages() && done < total; k++) {
        HostBuffer page = rows.page(k);
        long length = Math.min(RowPages.capacityBytes(page), total - done);
        CUevent event = null;
        if (page.isPinned()) {
          Transfers.enqueueDownload(ws, out.at(done), page.address(), length);
          event = new CUevent();
          Cuda.check(cuEventCreate(event, CUevent_flags.CU_EVENT_DISABLE_TIMING),
              "cuEventCreate");
          events.add(event);
          Cuda.check(cuEventRecord(event, ws.stream), "cuEventRecord");
        } else {
          Transfers.downloadStaged(ws, out.at(done), page.address(), length);
          events.add(null);
        }
        done += length;
        ends.add(done);
      }
      clock.mark(3, ws.stream);
    } catch (RuntimeException e) {
      // Nothing may read or free the pages while copies into them are under way.
      JCudaDriver.cuStreamSynchronize(ws.stream);
      for (CUevent event : events) {
        if (event != null) {
          cuEventDestroy(event);
        }
      }
      throw e;
    }
    long[] endArray = ends.stream().mapToLong(Long::longValue).toArray();
    // The stream has finished the gather: only the copies back still read the device, from out.
    List<DeviceBuffer> buffers = new ArrayList<>(List.of(out));
    for (DeviceBuffer b : owned) {
      if (b != out) {
        b.close();
      }
    }
    owned.clear();
    return new CudaRowArrival(ws.device, endArray, events.toArray(new CUevent[0]), clock,
        buffers);
  }

  private DeviceBuffer allocate(long sizeBytes) {
    DeviceBuffer buffer =
        ws.device.memory.allocate(Math.max(8, sizeBytes), DeviceFaults.Phase.GATHER);
    owned.add(buffer);
    return buffer;
  }

  @Override
  public void close() {
    if (owned.isEmpty()) {
      return;
    }
    // The stream may still read the buffers after a failure: wait before they go back to the pool.
    JCudaDriver.cuStreamSynchronize(ws.stream);
    for (DeviceBuffer b : owned) {
      b.close();
    }
    owned.clear();
  }
}
