package io.gpusort.engine.cuda;

import static jcuda.driver.JCudaDriver.cuEventCreate;
import static jcuda.driver.JCudaDriver.cuEventDestroy;
import static jcuda.driver.JCudaDriver.cuEventElapsedTime;
import static jcuda.driver.JCudaDriver.cuEventRecord;

import jcuda.driver.CUevent;
import jcuda.driver.CUevent_flags;
import jcuda.driver.CUstream;

/**
 * Timing events on a stream that mark the boundaries of an engine call's device stages (upload,
 * sort or gather, download), read once the stream has passed the last one. The device's own clock
 * says how long each stage took, which host timers around asynchronous copies cannot.
 */
final class StageClock implements AutoCloseable {
  private final CUevent[] marks;
  private final boolean[] recorded;
  private int created;

  StageClock(int numMarks) {
    marks = new CUevent[numMarks];
    recorded = new boolean[numMarks];
    try {
      for (; created < numMarks; created++) {
        marks[created] = new CUevent();
        Cuda.check(cuEventCreate(marks[created], CUevent_flags.CU_EVENT_DEFAULT), "cuEventCreate");
      }
    } catch (RuntimeException e) {
      close();
      throw e;
    }
  }

  /** Records mark {@code i} on {@code stream}. */
  void mark(int i, CUstream stream) {
    Cuda.check(cuEventRecord(marks[i], stream), "cuEventRecord");
    recorded[i] = true;
  }

  /** Waits until the stream has passed mark {@code i}, if it was recorded. */
  void await(int i) {
    if (recorded[i]) {
      Cuda.check(jcuda.driver.JCudaDriver.cuEventSynchronize(marks[i]), "cuEventSynchronize");
    }
  }

  /**
   * Nanoseconds between marks {@code from} and {@code to}, once the stream has passed {@code to};
   * 0 when either was not recorded.
   */
  long nanosBetween(int from, int to) {
    if (!recorded[from] || !recorded[to]) {
      return 0;
    }
    float[] millis = new float[1];
    Cuda.check(cuEventElapsedTime(millis, marks[from], marks[to]), "cuEventElapsedTime");
    return (long) (millis[0] * 1e6);
  }

  @Override
  public void close() {
    for (int i = 0; i < created; i++) {
      cuEventDestroy(marks[i]);
    }
    created = 0;
  }
}
