package io.gpusort.sql;

import io.gpusort.compat.ScalaCollections;
import java.util.Map;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.Sort;
import org.apache.spark.sql.catalyst.rules.Rule;
import scala.Option;
import scala.runtime.AbstractPartialFunction;

/**
 * The optimizer rule, run with the user-provided ones after Spark's own batches, that turns each
 * {@code Sort} {@link GpuSortTransform} tagged and Spark's optimizer kept into a
 * {@link GpuSortNode}. Spark's rules have by then removed the sorts {@code orderBy} would lose (one
 * row at most, constant keys, a sort under another), so {@code GpuSort} sorts exactly where
 * Spark's sort would. From here on the node is opaque to Spark, as before this rule: adaptive
 * execution's re-optimization leaves it where it stands.
 */
public final class GpuSortNodes extends Rule<LogicalPlan> {
  private static final long serialVersionUID = 1L;

  @Override
  public LogicalPlan apply(LogicalPlan plan) {
    return plan.transformUp(new AbstractPartialFunction<LogicalPlan, LogicalPlan>() {
      @Override
      public boolean isDefinedAt(LogicalPlan node) {
        return node instanceof Sort sort
            && sort.getTagValue(GpuSortTransform.SORT_SETTINGS).isDefined();
      }

      @Override
      public LogicalPlan apply(LogicalPlan node) {
        Sort sort = (Sort) node;
        Option<Map<String, String>> settings = sort.getTagValue(GpuSortTransform.SORT_SETTINGS);
        return new GpuSortNode(ScalaCollections.immutable(sort.order()), sort.global(),
            settings.get(), sort.child());
      }
    });
  }
}
