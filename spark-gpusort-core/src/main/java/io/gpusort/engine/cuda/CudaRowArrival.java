package io.gpusort.engine.cuda;

import static jcuda.driver.JCudaDriver.cuEventDestroy;
import static jcuda.driver.JCudaDriver.cuEventSynchronize;

import io.gpusort.engine.RowArrival;
import java.util.List;
import jcuda.driver.CUevent;

/**
 * A gather's sorted stream coming back page by page: one event per page copy, waited for as the
 * reader reaches the page. Holds the gather's device buffers until the last copy is done, then
 * gives them back to the pool.
 */
final class CudaRowArrival implements RowArrival {
  private final CudaDevice device;
  /** Stream bytes in place once copy k is done, ascending. */
  private final long[] ends;
  /** The event after copy k, or null where the copy was done before this was made. */
  private final CUevent[] copied;
  private final StageClock clock;
  private final List<DeviceBuffer> buffers;
  private long arrived;
  private long fromDeviceNanos;
  private boolean closed;

  CudaRowArrival(CudaDevice device, long[] ends, CUevent[] copied, StageClock clock,
      List<DeviceBuffer> buffers) {
    this.device = device;
    this.ends = ends;
    this.copied = copied;
    this.clock = clock;
    this.buffers = buffers;
  }

  @Override
  public void await(long bytes) {
    if (bytes <= arrived) {
      return;
    }
    if (closed) {
      throw new IllegalStateException("the sorted rows were given up");
    }
    int k = 0;
    while (k < ends.length - 1 && ends[k] < bytes) {
      k++;
    }
    if (copied[k] != null) {
      device.makeCurrent();
      int result = cuEventSynchronize(copied[k]);
      if (result != jcuda.driver.CUresult.CUDA_SUCCESS) {
        throw new IllegalStateException("the device failed while copying sorted rows back; "
            + "the sort's rows are lost", new CudaException("cuEventSynchronize", result, ""));
      }
    }
    arrived = ends[k];
  }

  @Override
  public long fromDeviceNanos() {
    return fromDeviceNanos;
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    try {
      await(ends.length == 0 ? 0 : ends[ends.length - 1]);
      clock.await(3);
      fromDeviceNanos = clock.nanosBetween(2, 3);
    } finally {
      closed = true;
      device.makeCurrent();
      for (CUevent event : copied) {
        if (event != null) {
          cuEventDestroy(event);
        }
      }
      clock.close();
      for (DeviceBuffer b : buffers) {
        b.close();
      }
      buffers.clear();
    }
  }
}
