package io.gpusort.sql;

import io.gpusort.config.GpuSortConf;
import io.gpusort.config.GpuSortConf.GlobalMode;
import java.util.List;
import java.util.Map;
import org.apache.spark.network.util.JavaUtils;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.SortOrder;
import org.apache.spark.sql.catalyst.plans.physical.Partitioning;
import org.apache.spark.sql.catalyst.plans.physical.UnknownPartitioning;
import org.apache.spark.sql.execution.ColumnarToRowExec;
import org.apache.spark.sql.execution.columnar.InMemoryTableScanExec;
import org.apache.spark.sql.execution.InputAdapter;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.WholeStageCodegenExec;
import org.apache.spark.sql.execution.metric.SQLMetric;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import scala.collection.immutable.IndexedSeq;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/**
 * The physical sort node: sorts within partitions, or globally through a range shuffle, on the
 * configured engine. Global output is ordered across partitions, but rows with equal keys may be
 * split between neighbouring partitions (that is what keeps heavy keys balanced), so the node
 * claims no clustering, only its ordering.
 */
public final class GpuSortExec extends SparkPlan {
  private static final long serialVersionUID = 1L;

  /** Spark's key (read by its UnsafeExternalSorter too) that forces a spill after that many rows. */
  static final String FORCE_SPILL_ROWS_KEY = "spark.shuffle.spill.numElementsForceSpillThreshold";

  private final Seq<SortOrder> order;
  private final boolean global;
  private final Map<String, String> settings;
  private final SparkPlan child;
  private transient SortMetrics sortMetrics;

  public GpuSortExec(Seq<SortOrder> order, boolean global, Map<String, String> settings,
      SparkPlan child) {
    this.order = order;
    this.global = global;
    this.settings = settings;
    this.child = child;
  }

  public SparkPlan child() {
    return child;
  }

  public boolean global() {
    return global;
  }

  @Override
  public RDD<InternalRow> doExecute() {
    GpuSortConf conf = GpuSortConf.of(settings);
    // The merge mode's map side sorts the input's partitions as a sort within them does.
    boolean merging = global && conf.get(GpuSortConf.GLOBAL_MODE) == GlobalMode.MERGE;
    RDD<ColumnarBatch> batches = global && !merging ? null : columnarInput(
        conf.get(GpuSortConf.COLUMNAR_INTAKE), conf.get(GpuSortConf.CACHE_BATCHES));
    if (!global && batches != null) {
      return SortPipelines.sortBatchesWithinPartitions(batches,
          sortPlan(conf, expectedPartitionRows(child, batches.getNumPartitions())));
    }
    RDD<InternalRow> input = child.execute();
    if (merging) {
      return SortPipelines.sortGlobally(input, batches,
          sortPlan(conf, expectedPartitionRows(child, input.getNumPartitions())),
          sortPlan(conf, 0));
    }
    // A global sort's partitions are the exchange's, not the input's: no estimate for them.
    SortPlan plan = sortPlan(conf,
        global ? 0 : expectedPartitionRows(child, input.getNumPartitions()));
    return global
        ? SortPipelines.sortGlobally(input, plan)
        : SortPipelines.sortWithinPartitions(input, plan);
  }

  /**
   * Rows a partition of {@code input} holds on average where Spark's statistics know its rows
   * (a cached relation once materialized, a range; not a filter's or a projection's, whose
   * statistics carry sizes only), else 0.
   */
  static long expectedPartitionRows(SparkPlan input, int numPartitions) {
    SparkPlan plan = input;
    // Through the wrappers that pass rows on as they are, to the plan a logical one made.
    while (plan.logicalLink().isEmpty()) {
      if (plan instanceof WholeStageCodegenExec stage) {
        plan = stage.child();
      } else if (plan instanceof InputAdapter adapter) {
        plan = adapter.child();
      } else if (plan instanceof ColumnarToRowExec toRows) {
        plan = toRows.child();
      } else {
        return 0;
      }
    }
    if (numPartitions <= 0) {
      return 0;
    }
    scala.Option<scala.math.BigInt> rows = plan.logicalLink().get().stats().rowCount();
    if (rows.isEmpty() || !rows.get().isValidLong()) {
      return 0;
    }
    long total = rows.get().longValue();
    return total <= 0 ? 0 : (total + numPartitions - 1) / numPartitions;
  }

  /**
   * The batches the columnar intake takes, or null where the rows come as rows: those of the
   * columnar source below, or, with {@code cacheBatches} and where the child is a scan of the
   * in-memory cache that would hand out rows (a string or binary column), its cached batches
   * read by {@link CachedBatchColumns}.
   */
  private RDD<ColumnarBatch> columnarInput(boolean columnarIntake, boolean cacheBatches) {
    SparkPlan columnar = columnarSource(columnarIntake);
    if (columnar != null) {
      return columnar.executeColumnar();
    }
    if (columnarIntake && cacheBatches && child instanceof InMemoryTableScanExec scan
        && ColumnarRowWriter.of(child.schema()) != null) {
      return CachedBatchColumns.read(scan);
    }
    return null;
  }

  /**
   * The child itself when it can hand out batches (the in-memory cache's scan), or the columnar
   * plan under the row conversion Spark put above it for this node (a file scan's batches turned
   * into rows, alone in its codegen stage), when the columnar intake can take its batches: a sort
   * within partitions or the map side of a global sort in merge mode, columns
   * {@link ColumnarRowWriter} writes (atomic types), {@code spark.gpusort.intake.columnar} on. Null otherwise. (The in-memory cache hands out
   * batches of numeric columns only: with a string, binary or decimal column it gives rows.)
   */
  private SparkPlan columnarSource(boolean columnarIntake) {
    if (!columnarIntake || ColumnarRowWriter.of(child.schema()) == null) {
      return null;
    }
    if (child.supportsColumnar()) {
      // A scan that hands out rows or batches alike (the in-memory cache): take the batches.
      return child;
    }
    SparkPlan node = child;
    if (node instanceof WholeStageCodegenExec stage) {
      node = stage.child();
    }
    if (node instanceof ColumnarToRowExec toRows && toRows.child().supportsColumnar()
        && toRows.child().output().equals(child.output())) {
      return toRows.child();
    }
    return null;
  }

  private SortPlan sortPlan(GpuSortConf conf, long expectedPartitionRows) {
    List<SortOrder> orders = CollectionConverters.asJava(order);
    KeySpec keys = KeySpec.of(orders, child.output(), conf.get(GpuSortConf.STRING_PREFIX_BYTES));
    SQLConf sqlConf = SQLConf.get();
    long advisoryBytes = JavaUtils.byteStringAsBytes(sqlConf.getConfString(
        "spark.sql.adaptive.advisoryPartitionSizeInBytes", "64MB"));
    return new SortPlan(keys, child.schema(), conf, sqlConf.numShufflePartitions(),
        Math.max(1, advisoryBytes), sortMetrics(), forceSpillRows(), expectedPartitionRows);
  }

  /** Spark's own threshold of rows a sorter holds before it spills regardless of memory. */
  private int forceSpillRows() {
    long rows = sparkContext().conf().getLong(FORCE_SPILL_ROWS_KEY, Integer.MAX_VALUE);
    return (int) Math.max(1, Math.min(Integer.MAX_VALUE, rows));
  }

  private synchronized SortMetrics sortMetrics() {
    if (sortMetrics == null) {
      sortMetrics = SortMetrics.create(sparkContext());
    }
    return sortMetrics;
  }

  @Override
  public scala.collection.immutable.Map<String, SQLMetric> metrics() {
    return scala.collection.immutable.Map.from(CollectionConverters.asScala(sortMetrics().byKey()));
  }

  @Override
  public Seq<Attribute> output() {
    return child.output();
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
  public Seq<SparkPlan> children() {
    return CollectionConverters.asScala(List.of(child)).toList();
  }

  @Override
  public SparkPlan withNewChildrenInternal(IndexedSeq<SparkPlan> newChildren) {
    return new GpuSortExec(order, global, settings, newChildren.apply(0));
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
    return that instanceof GpuSortExec;
  }

  @Override
  public boolean equals(Object that) {
    return that instanceof GpuSortExec other && order.equals(other.order)
        && global == other.global && settings.equals(other.settings) && child.equals(other.child);
  }

  @Override
  public int hashCode() {
    return java.util.Objects.hash(order, global, settings, child);
  }
}
