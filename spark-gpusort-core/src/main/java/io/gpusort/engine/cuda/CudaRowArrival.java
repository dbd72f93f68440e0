package io.gpusort.engine.cuda;

import static jcuda.driver.JCudaDriver.cuEventDestroy;
import static jcuda.driver.JCudaDriver.cuEventQuery;
import static jcuda.driver.JCudaDriver.cuEventSynchronize;

import io.gpusort.engine.RowArrival;
import java.util.List;
import jcuda.driver.CUevent;
import jcuda.driver.CUresult;

/**
 * A gather's sorted stream coming back page by page: one event per page copy, waited for as the
 * reader reaches the page. Holds the gather's output buffer on the device until the last copy is
 * done, then gives it back to the pool at once (the reader may take much longer to reach the end).
 */
final class CudaRowArrival implements RowArrival {
  private final CudaDevice device;
  /** Stream bytes in place once copy k is done, ascending. */
  private final long[] ends;
  /** The event after copy k, or null where the copy was done before this was made. */
  private final CUevent[] copied;
  private final StageClock clock;
  private final List<DeviceBuffer> buffers;
  /** Copies before this one are known to be done. */
  private int next;
  private long arrived;
  private long fromDeviceNanos;
  /** Whether the events, the clock and the device buffers were given back. */
  private boolean released;

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
    if (released) {
      throw new IllegalStateException("the sorted rows were given up");
    }
    int k = next;
    while (k < ends.length - 1 && ends[k] < bytes) {
      k++;
    }
    if (copied[k] != null) {
      device.makeCurrent();
      int result = cuEventSynchronize(copied[k]);
      if (result != CUresult.CUDA_SUCCESS) {
        throw new IllegalStateException("the device failed while copying sorted rows back; "
            + "the sort's rows are lost", new CudaException("cuEventSynchronize", result, ""));
      }
    }
    arrived = ends[k];
    next = k + 1;
    if (next == ends.length) {
      release();
    }
  }

  /** Gives the device memory back, without waiting, once the last copy is done. */
  @Override
  public void poll() {
    if (released || ends.length == 0) {
      return;
    }
    CUevent last = copied[ends.length - 1];
    if (last != null) {
      device.makeCurrent();
      if (cuEventQuery(last) != CUresult.CUDA_SUCCESS) {
        return;
      }
    }
    arrived = ends[ends.length - 1];
    next = ends.length;
    release();
  }

  @Override
  public long fromDeviceNanos() {
    return fromDeviceNanos;
  }

  @Override
  public void close() {
    if (released) {
      return;
    }
    try {
      await(ends.length == 0 ? 0 : ends[ends.length - 1]);
    } finally {
      release();
    }
  }

  /** Reads the copies' device time (once they are done) and frees everything; idempotent. */
  private void release() {
    if (released) {
      return;
    }
    released = true;
    try {
      device.makeCurrent();
      if (next == ends.length) {
        clock.await(3);
        fromDeviceNanos = clock.nanosBetween(2, 3);
      }
    } finally {
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
