package io.gpusort.sql.diff;

import io.gpusort.compat.ScalaCollections;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanExec;
import org.apache.spark.sql.execution.adaptive.QueryStageExec;

/**
 * Which sorts an executed plan ran: the plugin's nodes (io.gpusort.sql.GpuSortExec, the
 * exchange GpuRangeSortExchangeExec) against Spark's own SortExec and TakeOrderedAndProjectExec.
 * With adaptive execution the final plan is read, query stage by query stage.
 */
final class DiffPlans {
  private static final String PLUGIN_PACKAGE = "io.gpusort.";

  private DiffPlans() {}

  /** Counts of the sorting nodes of one executed plan. */
  record SortNodes(int plugin, int spark) {
    SortNodes plus(SortNodes other) {
      return new SortNodes(plugin + other.plugin, spark + other.spark);
    }
  }

  static SortNodes count(SparkPlan plan) {
    SortNodes here = new SortNodes(0, 0);
    String name = plan.getClass().getName();
    if (name.startsWith(PLUGIN_PACKAGE)) {
      here = new SortNodes(1, 0);
    } else if (name.endsWith(".SortExec") || name.endsWith(".TakeOrderedAndProjectExec")) {
      here = new SortNodes(0, 1);
    }
    if (plan instanceof AdaptiveSparkPlanExec adaptive) {
      here = here.plus(count(adaptive.executedPlan()));
    } else if (plan instanceof QueryStageExec stage) {
      here = here.plus(count(stage.plan()));
    }
    for (SparkPlan child : ScalaCollections.asJava(plan.children())) {
      here = here.plus(count(child));
    }
    return here;
  }
}
