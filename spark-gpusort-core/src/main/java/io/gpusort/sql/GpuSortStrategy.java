package io.gpusort.sql;

import io.gpusort.compat.ScalaCollections;
import io.gpusort.config.GpuSortConf;
import io.gpusort.config.GpuSortConf.GlobalMode;
import java.util.List;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.RepartitionByExpression;
import org.apache.spark.sql.catalyst.plans.physical.ClusteredDistribution;
import org.apache.spark.sql.catalyst.plans.physical.ClusteredDistribution$;
import org.apache.spark.sql.catalyst.plans.physical.Distribution;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.SparkStrategy;
import scala.Option;
import scala.collection.immutable.Seq;

/**
 * Plans {@link GpuSortNode}: a global sort in merge mode as the exchange that sorts, cuts and
 * merges ({@link GpuRangeSortExchangeExec}), so that adaptive execution sees its shuffle as a query
 * stage; every other one as {@link GpuSortExec}.
 */
public final class GpuSortStrategy extends SparkStrategy {
  @Override
  public Seq<SparkPlan> apply(LogicalPlan plan) {
    if (plan instanceof GpuSortNode node) {
      boolean merge = node.global()
          && GpuSortConf.of(node.settings()).get(GpuSortConf.GLOBAL_MODE) == GlobalMode.MERGE;
      SparkPlan exec = merge
          ? new GpuRangeSortExchangeExec(node.order(), 0, node.settings(), planLater(node.child()))
          : new GpuSortExec(node.order(), node.global(), node.settings(), planLater(node.child()),
              childDistribution(node));
      return ScalaCollections.list(List.of(exec));
    }
    return ScalaCollections.list(List.<SparkPlan>of());
  }

  /**
   * The clustering of the user's repartition a sort within partitions at the query's top sits on
   * ({@link GpuSortNodes#USER_REPARTITION}), as adaptive execution reads it under Spark's sort;
   * none elsewhere.
   */
  private static Option<Distribution> childDistribution(GpuSortNode node) {
    Option<RepartitionByExpression> tagged = node.getTagValue(GpuSortNodes.USER_REPARTITION);
    if (node.global() || tagged.isEmpty()) {
      return Option.empty();
    }
    RepartitionByExpression repartition = tagged.get();
    return Option.apply(new ClusteredDistribution(repartition.partitionExpressions(),
        ClusteredDistribution$.MODULE$.$lessinit$greater$default$2(),
        repartition.optNumPartitions()));
  }
}
