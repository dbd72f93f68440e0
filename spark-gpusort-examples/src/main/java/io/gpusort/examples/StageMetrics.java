package io.gpusort.examples;

import io.gpusort.compat.ScalaCollections;
import io.gpusort.sql.GpuRangeSortExchangeExec;
import io.gpusort.sql.GpuSortExec;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanExec;
import org.apache.spark.sql.execution.adaptive.QueryStageExec;
import org.apache.spark.sql.execution.metric.SQLMetric;

/** The GpuSort nodes' stage metrics in an executed plan, as {@link SortBenchmark} reports them. */
final class StageMetrics {
  /** Metric keys of the GpuSort node with this suffix are stage times. */
  private static final String STAGE_TIME_SUFFIX = "Time";
  /** The GpuSort node's count of engine calls, shown beside its stage times. */
  static final String ENGINE_CALLS_METRIC = "engineChunks";
  /** Spark's type of a timing metric in milliseconds (all others are taken as nanoseconds). */
  private static final String MILLIS_TIMING_TYPE = "timing";

  private StageMetrics() {}

  /**
   * The stage metrics of the GpuSort nodes in {@code plan}, each summed over the nodes: stage
   * times ({@value #STAGE_TIME_SUFFIX} keys) in seconds, engine calls as a count. Empty if the
   * plan has no GpuSort node.
   */
  static Map<String, Double> sample(SparkPlan plan) {
    Map<String, Double> sample = new TreeMap<>();
    for (SparkPlan node : gpuSortNodes(plan, new ArrayList<>())) {
      ScalaCollections.asJava(node.metrics()).forEach((key, metric) -> {
        if (key.endsWith(STAGE_TIME_SUFFIX)) {
          sample.merge(key, ExampleRuntime.seconds(nanos(metric)), Double::sum);
        } else if (key.equals(ENGINE_CALLS_METRIC)) {
          sample.merge(key, (double) Math.max(0, metric.value()), Double::sum);
        }
      });
    }
    return sample;
  }

  /** A timing metric's value in nanoseconds; Spark's "not set" (negative) counts as 0. */
  private static long nanos(SQLMetric metric) {
    long value = Math.max(0, metric.value());
    return MILLIS_TIMING_TYPE.equals(metric.metricType()) ? value * 1_000_000 : value;
  }

  /**
   * Adds the GpuSort nodes (the sort, the exchange that sorts, cuts and merges) of an executed
   * {@code plan} to {@code found}, looking into adaptive plans (their final plan) and query stages
   * as well as children; returns {@code found}.
   */
  private static List<SparkPlan> gpuSortNodes(SparkPlan plan, List<SparkPlan> found) {
    if (plan instanceof GpuSortExec || plan instanceof GpuRangeSortExchangeExec) {
      found.add(plan);
    }
    if (plan instanceof AdaptiveSparkPlanExec adaptive) {
      gpuSortNodes(adaptive.executedPlan(), found);
    } else if (plan instanceof QueryStageExec stage) {
      gpuSortNodes(stage.plan(), found);
    }
    for (SparkPlan child : ScalaCollections.asJava(plan.children())) {
      gpuSortNodes(child, found);
    }
    return found;
  }
}
