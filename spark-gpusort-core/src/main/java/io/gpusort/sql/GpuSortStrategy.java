package io.gpusort.sql;

import io.gpusort.compat.ScalaCollections;
import io.gpusort.config.GpuSortConf;
import io.gpusort.config.GpuSortConf.GlobalMode;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.catalyst.expressions.SortOrder;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.Sort;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.SparkStrategy;
import scala.Option;
import scala.collection.immutable.Seq;

/**
 * Plans the {@code Sort}s that {@link GpuSortTransform} tagged (those Spark's optimizer kept): a
 * global sort in merge mode as the exchange that sorts, cuts and merges
 * ({@link GpuRangeSortExchangeExec}), so that adaptive execution sees its shuffle as a query
 * stage; every other one as {@link GpuSortExec}. Untagged sorts are left to Spark's planner.
 */
public final class GpuSortStrategy extends SparkStrategy {
  @Override
  public Seq<SparkPlan> apply(LogicalPlan plan) {
    Option<Map<String, String>> tagged = plan instanceof Sort s
        ? s.getTagValue(GpuSortTransform.SORT_SETTINGS) : Option.empty();
    if (tagged.isDefined()) {
      Sort sort = (Sort) plan;
      Map<String, String> settings = tagged.get();
      Seq<SortOrder> order = ScalaCollections.immutable(sort.order());
      boolean merge = sort.global()
          && GpuSortConf.of(settings).get(GpuSortConf.GLOBAL_MODE) == GlobalMode.MERGE;
      SparkPlan exec = merge
          ? new GpuRangeSortExchangeExec(order, 0, settings, planLater(sort.child()))
          : new GpuSortExec(order, sort.global(), settings, planLater(sort.child()));
      return ScalaCollections.list(List.of(exec));
    }
    return ScalaCollections.list(List.<SparkPlan>of());
  }
}
