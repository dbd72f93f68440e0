package io.gpusort.sql;

import io.gpusort.compat.ScalaCollections;
import io.gpusort.compat.UnaryExec;
import io.gpusort.config.GpuSortConf;
import java.util.Map;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.SortOrder;
import org.apache.spark.sql.catalyst.plans.physical.Distribution;
import org.apache.spark.sql.catalyst.plans.physical.Partitioning;
import org.apache.spark.sql.catalyst.plans.physical.UnknownPartitioning;
import org.apache.spark.sql.catalyst.plans.physical.UnspecifiedDistribution$;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.metric.SQLMetric;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import scala.Option;
import scala.collection.immutable.Seq;

/**
 * The physical sort node: sorts within partitions, or globally through a range shuffle of its rows
 * ({@code spark.gpusort.global.mode=sort}; the merge mode is planned as {@link
 * GpuRangeSortExchangeExec} instead), on the configured engine. Global output is ordered across
 * partitions, but rows with equal keys may be
 * split between neighbouring partitions (that is what keeps heavy keys balanced), so the node
 * claims no clustering, only its ordering.
 */
public final class GpuSortExec extends UnaryExec {
  private static final long serialVersionUID = 1L;

  private final Seq<SortOrder> order;
  private final boolean global;
  private final Map<String, String> settings;
  private final SparkPlan child;
  /** What the node asks of its child's partitioning, where it asks anything. */
  private final Option<Distribution> childDistribution;
  private transient SortMetrics sortMetrics;

  public GpuSortExec(Seq<SortOrder> order, boolean global, Map<String, String> settings,
      SparkPlan child) {
    this(order, global, settings, child, Option.empty());
  }

  /**
   * A node that asks {@code childDistribution} of its child: the clustering of a user's
   * repartition below a sort within partitions at the query's top, which adaptive execution keeps
   * for Spark's own sort there ({@link GpuSortNodes#USER_REPARTITION}).
   */
  public GpuSortExec(Seq<SortOrder> order, boolean global, Map<String, String> settings,
      SparkPlan child, Option<Distribution> childDistribution) {
    this.order = order;
    this.global = global;
    this.settings = settings;
    this.child = child;
    this.childDistribution = childDistribution;
  }

  @Override
  public SparkPlan child() {
    return child;
  }

  public boolean global() {
    return global;
  }

  @Override
  public RDD<InternalRow> doExecute() {
    return SortFailures.guard(this::sortedRows);
  }

  private RDD<InternalRow> sortedRows() {
    GpuSortConf conf = GpuSortConf.of(settings);
    if (!global) {
      RDD<ColumnarBatch> batches = SortInputs.columnarInput(child, conf);
      if (batches != null) {
        return SortPipelines.sortBatchesWithinPartitions(batches,
            sortPlan(conf, SortInputs.expectedPartitionRows(child, batches.getNumPartitions())));
      }
    }
    RDD<InternalRow> input = child.execute();
    if (global) {
      // A global sort's partitions are the exchange's, not the input's: no estimate for them.
      return SortPipelines.sortGlobally(input, sortPlan(conf, 0));
    }
    return SortPipelines.sortWithinPartitions(input,
        sortPlan(conf, SortInputs.expectedPartitionRows(child, input.getNumPartitions())));
  }

  private SortPlan sortPlan(GpuSortConf conf, long expectedPartitionRows) {
    return SortInputs.plan(order, child, conf, sortMetrics(), 0, expectedPartitionRows);
  }

  private synchronized SortMetrics sortMetrics() {
    if (sortMetrics == null) {
      sortMetrics = SortMetrics.create(sparkContext());
    }
    return sortMetrics;
  }

  @Override
  public scala.collection.immutable.Map<String, SQLMetric> metrics() {
    return ScalaCollections.map(sortMetrics().byKey());
  }

  @Override
  public Seq<Distribution> requiredChildDistribution() {
    Distribution wanted = childDistribution.isDefined() ? childDistribution.get()
        : UnspecifiedDistribution$.MODULE$;
    return ScalaCollections.list(java.util.List.of(wanted));
  }

  @Override
  public Seq<Attribute> output() {
    return ScalaCollections.immutable(child.output());
  }

  @Override
  public Seq<SortOrder> outputOrdering() {
    return order;
  }

  @Override
  public Partitioning outputPartitioning() {
    return global ? new UnknownPartitioning(0) : child.outputPartitioning();
  }

  @Override
  protected SparkPlan withNewChild(SparkPlan newChild) {
    return new GpuSortExec(order, global, settings, newChild, childDistribution);
  }

  @Override
  public String nodeName() {
    return "GpuSort";
  }

  @Override
  public String simpleString(int maxFields) {
    return "GpuSort " + order.mkString("[", ", ", "]") + ", global=" + global;
  }

  @Override
  public int productArity() {
    return 5;
  }

  @Override
  public Object productElement(int n) {
    return switch (n) {
      case 0 -> order;
      case 1 -> global;
      case 2 -> settings;
      case 3 -> child;
      case 4 -> childDistribution;
      default -> throw new IndexOutOfBoundsException(n);
    };
  }

  @Override
  public boolean canEqual(Object that) {
    return that instanceof GpuSortExec;
  }

  @Override
  public boolean equals(Object that) {
    return that instanceof GpuSortExec other && order.equals(other.order)
        && global == other.global && settings.equals(other.settings) && child.equals(other.child)
        && childDistribution.equals(other.childDistribution);
  }

  @Override
  public int hashCode() {
    return java.util.Objects.hash(order, global, settings, child, childDistribution);
  }
}
