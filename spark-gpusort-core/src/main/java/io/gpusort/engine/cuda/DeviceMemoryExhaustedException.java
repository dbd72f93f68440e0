package io.gpusort.engine.cuda;

import io.gpusort.engine.EngineException;

/** An allocation would exceed the engine's device memory budget. */
public final class DeviceMemoryExhaustedException extends EngineException {
  private static final long serialVersionUID = 1L;

  public DeviceMemoryExhaustedException(String message) {
    super(message);
  }
}
