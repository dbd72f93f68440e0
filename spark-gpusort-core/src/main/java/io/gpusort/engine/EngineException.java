package io.gpusort.engine;

/** A failure inside an engine (device error, out of device memory, ...): the sort did not happen. */
public class EngineException extends RuntimeException {
  public EngineException(String message) {
    super(message);
  }

  public EngineException(String message, Throwable cause) {
    super(message, cause);
  }
}
