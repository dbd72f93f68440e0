package io.gpusort.engine.cuda;

import io.gpusort.engine.EngineException;
import jcuda.driver.CUresult;

/** A CUDA driver call failed; the message names the call, its result and the sizes involved. */
public class CudaException extends EngineException {
  private static final long serialVersionUID = 1L;

  private final int result;

  public CudaException(String call, int result, String detail) {
    super(call + " failed: " + CUresult.stringFor(result)
        + (detail == null || detail.isEmpty() ? "" : " (" + detail + ")"));
    this.result = result;
  }

  /** The driver's {@code CUresult} code. */
  public int result() {
    return result;
  }

  /** Whether the call ran out of device or pinned host memory. */
  public boolean outOfMemory() {
    return result == CUresult.CUDA_ERROR_OUT_OF_MEMORY;
  }
}
