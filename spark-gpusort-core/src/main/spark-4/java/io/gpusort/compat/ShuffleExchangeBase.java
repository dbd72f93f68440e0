package io.gpusort.compat;

import java.util.concurrent.atomic.AtomicReference;
import org.apache.spark.FutureAction;
import org.apache.spark.MapOutputStatistics;
import org.apache.spark.sql.execution.exchange.Exchange;
import org.apache.spark.sql.execution.exchange.ShuffleExchangeLike;
import scala.Option;
import scala.concurrent.Future;
import scala.concurrent.Promise;

/**
 * An exchange that is a shuffle query stage, as Spark 4 defines one: Spark 4's
 * {@code ShuffleExchangeLike} keeps the stage's job, its cancellation and its promise of map
 * statistics as lazy values, which a Scala class gets as fields of its own and a Java one must
 * hold itself: Scala's trait computes them once per instance in those fields, and its default
 * methods compute them again on each call (without the fields, the stage's future never
 * completes). The class for Spark 3.5, whose trait has none of this, lives in
 * {@code src/main/spark-3}.
 */
public abstract class ShuffleExchangeBase extends Exchange implements ShuffleExchangeLike {
  private static final long serialVersionUID = 1L;

  private transient AtomicReference<Option<FutureAction<MapOutputStatistics>>> futureAction;
  private transient boolean cancelled;
  private transient Promise<MapOutputStatistics> promise;
  private transient Future<MapOutputStatistics> completionFuture;
  private transient java.util.concurrent.Future<Object> triggerFuture;

  protected ShuffleExchangeBase() {
    ShuffleExchangeLike.$init$(this);
  }

  @Override
  public void org$apache$spark$sql$execution$exchange$ShuffleExchangeLike$_setter_$futureAction_$eq(
      AtomicReference<Option<FutureAction<MapOutputStatistics>>> value) {
    futureAction = value;
  }

  @Override
  public AtomicReference<Option<FutureAction<MapOutputStatistics>>> futureAction() {
    return futureAction;
  }

  @Override
  public boolean org$apache$spark$sql$execution$exchange$ShuffleExchangeLike$$isCancelled() {
    return cancelled;
  }

  @Override
  public void org$apache$spark$sql$execution$exchange$ShuffleExchangeLike$$isCancelled_$eq(
      boolean value) {
    cancelled = value;
  }

  @Override
  public synchronized Promise<MapOutputStatistics>
      org$apache$spark$sql$execution$exchange$ShuffleExchangeLike$$promise() {
    if (promise == null) {
      promise = ShuffleExchangeLike.super
          .org$apache$spark$sql$execution$exchange$ShuffleExchangeLike$$promise();
    }
    return promise;
  }

  @Override
  public synchronized Future<MapOutputStatistics>
      org$apache$spark$sql$execution$exchange$ShuffleExchangeLike$$completionFuture() {
    if (completionFuture == null) {
      completionFuture = ShuffleExchangeLike.super
          .org$apache$spark$sql$execution$exchange$ShuffleExchangeLike$$completionFuture();
    }
    return completionFuture;
  }

  @Override
  public synchronized java.util.concurrent.Future<Object>
      org$apache$spark$sql$execution$exchange$ShuffleExchangeLike$$triggerFuture() {
    if (triggerFuture == null) {
      triggerFuture = ShuffleExchangeLike.super
          .org$apache$spark$sql$execution$exchange$ShuffleExchangeLike$$triggerFuture();
    }
    return triggerFuture;
  }
}
