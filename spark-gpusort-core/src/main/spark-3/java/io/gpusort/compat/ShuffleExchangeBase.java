package io.gpusort.compat;

import org.apache.spark.sql.execution.exchange.Exchange;
import org.apache.spark.sql.execution.exchange.ShuffleExchangeLike;

/**
 * An exchange that is a shuffle query stage, as Spark 3.5 defines one: its
 * {@code ShuffleExchangeLike} has no state of its own (Spark 4's keeps the stage's job and its
 * cancellation, held by the class for Spark 4 in {@code src/main/spark-4}). It has no
 * {@code shuffleId} either; the exchange declares one all the same, as on Spark 4.
 */
public abstract class ShuffleExchangeBase extends Exchange implements ShuffleExchangeLike {
  private static final long serialVersionUID = 1L;

  protected ShuffleExchangeBase() {
    ShuffleExchangeLike.$init$(this);
  }

  /** The shuffle's id in Spark's map output tracker. */
  public abstract int shuffleId();
}
