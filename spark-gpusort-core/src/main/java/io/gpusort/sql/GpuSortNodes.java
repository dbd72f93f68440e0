package io.gpusort.sql;

import io.gpusort.compat.ScalaCollections;
import java.util.Map;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.SortOrder;
import org.apache.spark.sql.catalyst.plans.logical.DeserializeToObject;
import org.apache.spark.sql.catalyst.plans.logical.Filter;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.Project;
import org.apache.spark.sql.catalyst.plans.logical.RepartitionByExpression;
import org.apache.spark.sql.catalyst.plans.logical.Sort;
import org.apache.spark.sql.catalyst.rules.Rule;
import org.apache.spark.sql.catalyst.trees.TreeNodeTag;
import scala.Option;
import scala.runtime.AbstractPartialFunction;

/**
 * The optimizer rule, run with the user-provided ones after Spark's own batches, that turns each
 * {@code Sort} {@link GpuSortTransform} tagged and Spark's optimizer kept into a
 * {@link GpuSortNode}. Spark's rules have by then removed the sorts {@code orderBy} would lose (one
 * row at most, constant keys, a sort under another), so {@code GpuSort} sorts exactly where
 * Spark's sort would. From here on the node is opaque to Spark, as before this rule: adaptive
 * execution's re-optimization leaves it where it stands.
 *
 * <p>A sort within partitions at the top of the query (under projections, filters, local sorts
 * and a {@code Dataset.rdd}'s deserialization only) above a user's repartition by columns is
 * tagged with that repartition ({@link #USER_REPARTITION}), so that its physical node asks for the
 * repartition's clustering as Spark's own local sort gets it: adaptive execution keeps the
 * distribution of a repartition it finds at the top under a local {@code SortExec} (and no other
 * node), even where an empty input lets it drop the shuffle.
 */
public final class GpuSortNodes extends Rule<LogicalPlan> {
  private static final long serialVersionUID = 1L;
  /** The user's repartition by columns under a sort within partitions at the query's top. */
  static final TreeNodeTag<RepartitionByExpression> USER_REPARTITION =
      new TreeNodeTag<>("spark.gpusort.userRepartition");

  @Override
  public LogicalPlan apply(LogicalPlan plan) {
    LogicalPlan nodes = replaceTagged(plan);
    tagTopRepartition(nodes);
    return nodes;
  }

  /**
   * Tags the local {@link GpuSortNode}s on the query's top path with the user's repartition by
   * columns below them, as Spark's adaptive execution looks for it (through projections that keep
   * its columns, filters and local sorts; not through a repartition by range or by number alone).
   */
  private static void tagTopRepartition(LogicalPlan plan) {
    java.util.List<GpuSortNode> sorts = new java.util.ArrayList<>();
    java.util.List<Project> projects = new java.util.ArrayList<>();
    LogicalPlan at = plan;
    while (true) {
      if (at instanceof GpuSortNode node && !node.global()) {
        sorts.add(node);
      } else if (at instanceof Project project) {
        projects.add(project);
      } else if (!(at instanceof Sort sort && !sort.global() || at instanceof Filter
          || at instanceof DeserializeToObject)) {
        break;
      }
      at = at.children().head();
    }
    if (!sorts.isEmpty() && at instanceof RepartitionByExpression repartition
        && byColumns(repartition) && projects.stream().allMatch(p -> keeps(p, repartition))) {
      for (GpuSortNode node : sorts) {
        node.setTagValue(USER_REPARTITION, repartition);
      }
    }
  }

  /** Whether a repartition hashes by columns (not by range, not by number alone). */
  private static boolean byColumns(RepartitionByExpression repartition) {
    return repartition.partitionExpressions().nonEmpty()
        && !repartition.partitionExpressions().exists(e -> e instanceof SortOrder);
  }

  /** Whether {@code project} keeps every column {@code repartition} hashes by. */
  private static boolean keeps(Project project, RepartitionByExpression repartition) {
    return repartition.partitionExpressions().forall((Expression e) ->
        project.projectList().exists(p -> ((Expression) p).semanticEquals(e)));
  }

  private static LogicalPlan replaceTagged(LogicalPlan plan) {
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
