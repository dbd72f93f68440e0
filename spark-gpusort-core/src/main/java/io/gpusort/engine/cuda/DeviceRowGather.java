package io.gpusort.engine.cuda;

import io.gpusort.engine.EngineTimes;
import io.gpusort.engine.RowPages;
import io.gpusort.memory.HostBuffer;
import io.gpusort.memory.HostMemory;
import java.util.ArrayList;
import java.util.List;
import jcuda.driver.CUdeviceptr;

/**
 * Puts rows in sorted order on the device (kernels/cuda/rows.cu): the row pages, their pointers
 * and the permutation go up, the records are gathered into one stream in permutation order, and
 * the stream comes back over the same pages ({@link RowPages}). Page-locked pages move by DMA with
 * no host copy; others go through the workspace's staging.
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

  /** Gathers and waits for the stream to be back in the pages. */
  void run() {
    try (StageClock clock = new StageClock(4)) {
      clock.mark(0, ws.stream);
      DeviceBuffer in = allocate(rows.recordBytes());
      long[] pageBase = uploadPages(in);
      CUdeviceptr pointers = upload(rows.pointers(), 8L * n);
      CUdeviceptr perm = upload(permutation, 4L * n);
      CUdeviceptr bases = uploadLongs(pageBase);
      clock.mark(1, ws.stream);
      DeviceBuffer out = allocate(rows.recordBytes());
      gather(in.pointer(), pointers, perm, bases, out.pointer());
      clock.mark(2, ws.stream);
      // Until here the pages are untouched and a failure leaves them as they were; from here the
      // device overwrites them.
      ws.synchronize();
      try {
        download(out);
        clock.mark(3, ws.stream);
        ws.synchronize();
      } catch (RuntimeException e) {
        throw new IllegalStateException("the device failed while copying " + n
            + " sorted rows back; the sort's rows are lost", e);
      }
      EngineTimes times = EngineTimes.ofThread();
      times.toDeviceNanos += clock.nanosBetween(0, 1);
      times.gatherNanos += clock.nanosBetween(1, 2);
      times.fromDeviceNanos += clock.nanosBetween(2, 3);
    }
  }

  /** Uploads each page's records back to back; returns where each page starts on the device. */
  private long[] uploadPages(DeviceBuffer in) {
    long[] base = new long[rows.numPages()];
    long at = 0;
    for (int k = 0; k < rows.numPages(); k++) {
      base[k] = at;
      HostBuffer page = rows.page(k);
      Transfers.upload(ws, page.address(), page.isPinned(), in.at(at), rows.usedBytes(k));
      at += rows.usedBytes(k);
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

  /** The sorted stream back over the pages, each page filled to its capacity. */
  private void download(DeviceBuffer out) {
    long done = 0;
    long total = rows.recordBytes();
    for (int k = 0; k < rows.numPages() && done < total; k++) {
      HostBuffer page = rows.page(k);
      long length = Math.min(RowPages.capacityBytes(page), total - done);
      if (page.isPinned()) {
        Transfers.enqueueDownload(ws, out.at(done), page.address(), length);
      } else {
        Transfers.downloadStaged(ws, out.at(done), page.address(), length);
      }
      done += length;
    }
  }

  private DeviceBuffer allocate(long sizeBytes) {
    DeviceBuffer buffer = ws.device.memory.allocate(Math.max(8, sizeBytes));
    owned.add(buffer);
    return buffer;
  }

  @Override
  public void close() {
    // The stream may still read the buffers after a failure: wait before they go back to the pool.
    jcuda.driver.JCudaDriver.cuStreamSynchronize(ws.stream);
    for (DeviceBuffer b : owned) {
      b.close();
    }
    owned.clear();
  }
}
