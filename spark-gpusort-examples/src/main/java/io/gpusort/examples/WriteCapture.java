package io.gpusort.examples;

import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.QueryExecution;
import org.apache.spark.sql.util.QueryExecutionListener;

/**
 * The queries that succeeded since the last {@link #clear()}, as Spark's listener bus reports
 * them: asynchronously, after the query has returned.
 */
final class WriteCapture implements QueryExecutionListener {
  /** The longest wait for Spark's listeners to report a finished write. */
  private static final long LISTENER_TIMEOUT_MILLIS = 60_000;

  private final BlockingQueue<QueryExecution> succeeded = new LinkedBlockingQueue<>();

  @Override
  public void onSuccess(String funcName, QueryExecution execution, long durationNanos) {
    succeeded.add(execution);
  }

  @Override
  public void onFailure(String funcName, QueryExecution execution, Exception exception) {
    // A failed write has already failed the benchmark in the driver.
  }

  void clear() {
    succeeded.clear();
  }

  /**
   * The one query that succeeded since {@link #clear()}, once the listeners have caught up.
   *
   * @throws IllegalStateException if none or several were reported
   */
  QueryExecution next(SparkSession spark, String caseName) {
    awaitListeners(spark);
    QueryExecution write;
    try {
      write = succeeded.poll(LISTENER_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted waiting for the write of " + caseName, e);
    }
    if (write == null || !succeeded.isEmpty()) {
      throw new IllegalStateException("expected Spark to report one write of " + caseName
          + ", got " + (write == null ? 0 : 1 + succeeded.size()));
    }
    return write;
  }

  /**
   * Waits until Spark's listener bus has delivered every event posted so far (to this capture
   * and to every other listener), at most {@value #LISTENER_TIMEOUT_MILLIS} ms.
   *
   * @throws IllegalStateException if the listeners did not catch up in that time
   */
  static void awaitListeners(SparkSession spark) {
    try {
      spark.sparkContext().listenerBus().waitUntilEmpty(LISTENER_TIMEOUT_MILLIS);
    } catch (TimeoutException e) {
      throw new IllegalStateException("Spark's listeners did not catch up within "
          + LISTENER_TIMEOUT_MILLIS + " ms", e);
    }
  }
}
