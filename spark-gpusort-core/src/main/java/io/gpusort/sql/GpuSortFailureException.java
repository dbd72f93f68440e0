package io.gpusort.sql;

/**
 * A failure of the plugin's own code in a query; the message names the setting that gets the query
 * going without the part that failed, the failure is the cause.
 */
public final class GpuSortFailureException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  GpuSortFailureException(String message, Throwable cause) {
    super(message, cause);
  }
}
