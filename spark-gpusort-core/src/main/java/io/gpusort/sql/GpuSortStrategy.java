package io.gpusort.sql;

import java.util.List;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.SparkStrategy;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/** Plans {@link GpuSortNode} as {@link GpuSortExec}. */
public final class GpuSortStrategy extends SparkStrategy {
  @Override
  public Seq<SparkPlan> apply(LogicalPlan plan) {
    if (plan instanceof GpuSortNode node) {
      SparkPlan exec = new GpuSortExec(node.order(), node.global(), node.settings(),
          planLater(node.child()));
      return CollectionConverters.asScala(List.of(exec)).toList();
    }
    return CollectionConverters.asScala(List.<SparkPlan>of()).toList();
  }
}
