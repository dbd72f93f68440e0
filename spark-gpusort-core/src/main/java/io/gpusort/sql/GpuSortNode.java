package io.gpusort.sql;

import io.gpusort.compat.ScalaCollections;
import io.gpusort.compat.UnaryLogicalPlan;
import java.util.Map;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.SortOrder;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import scala.Option;
import scala.collection.immutable.Seq;

/**
 * The logical sort that {@code GpuSort} puts in a query in place of Spark's {@code Sort}: same
 * semantics, planned as {@link GpuSortExec}. It carries the {@code spark.gpusort.*} settings read
 * when the transform was applied.
 */
public final class GpuSortNode extends UnaryLogicalPlan {
  private static final long serialVersionUID = 1L;

  private final Seq<SortOrder> order;
  private final boolean global;
  private final Map<String, String> settings;
  private final LogicalPlan child;

  public GpuSortNode(Seq<SortOrder> order, boolean global, Map<String, String> settings,
      LogicalPlan child) {
    this.order = order;
    this.global = global;
    this.settings = settings;
    this.child = child;
  }

  public Seq<SortOrder> order() {
    return order;
  }

  public boolean global() {
    return global;
  }

  public Map<String, String> settings() {
    return settings;
  }

  @Override
  public LogicalPlan child() {
    return child;
  }

  @Override
  public Seq<Attribute> output() {
    return ScalaCollections.immutable(child.output());
  }

  @Override
  public Option<Object> maxRows() {
    return child.maxRows();
  }

  @Override
  public Seq<SortOrder> outputOrdering() {
    return order;
  }

  @Override
  protected LogicalPlan withNewChild(LogicalPlan newChild) {
    return new GpuSortNode(order, global, settings, newChild);
  }

  @Override
  public String nodeName() {
    return "GpuSort";
  }

  @Override
  public int productArity() {
    return 4;
  }

  @Override
  public Object productElement(int n) {
    return switch (n) {
      case 0 -> order;
      case 1 -> global;
      case 2 -> settings;
      case 3 -> child;
      default -> throw new IndexOutOfBoundsException(n);
    };
  }

  @Override
  public boolean canEqual(Object that) {
    return that instanceof GpuSortNode;
  }

  @Override
  public boolean equals(Object that) {
    return that instanceof GpuSortNode other && order.equals(other.order)
        && global == other.global && settings.equals(other.settings) && child.equals(other.child);
  }

  @Override
  public int hashCode() {
    return java.util.Objects.hash(order, global, settings, child);
  }
}
