package io.gpusort.compat;

import java.util.List;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;

/**
 * A logical plan node with one child, for Scala 2.12: Spark's tree nodes take their new
 * children as a {@code scala.collection.IndexedSeq}, which a Java override must name exactly. The
 * class for Scala 2.13 (src/main/scala-2.13) names that version's. Subclasses give the child
 * and a copy of themselves over another.
 */
public abstract class UnaryLogicalPlan extends LogicalPlan {
  private static final long serialVersionUID = 1L;

  /** The one child. */
  public abstract LogicalPlan child();

  /** This node over {@code newChild}. */
  protected abstract LogicalPlan withNewChild(LogicalPlan newChild);

  @Override
  public final scala.collection.immutable.Seq<LogicalPlan> children() {
    return ScalaCollections.list(List.of(child()));
  }

  @Override
  public final LogicalPlan withNewChildrenInternal(
      scala.collection.IndexedSeq<LogicalPlan> newChildren) {
    return withNewChild(newChildren.apply(0));
  }
}
