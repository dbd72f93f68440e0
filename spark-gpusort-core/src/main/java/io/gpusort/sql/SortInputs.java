package io.gpusort.sql;

import io.gpusort.compat.ScalaCollections;
import io.gpusort.config.GpuSortConf;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.spark.network.util.JavaUtils;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeSet;
import org.apache.spark.sql.catalyst.expressions.BindReferences;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.expressions.SortOrder;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.catalyst.expressions.package$;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.Project;
import org.apache.spark.sql.catalyst.plans.logical.Statistics;
import org.apache.spark.sql.execution.CommandExecutionMode;
import org.apache.spark.sql.execution.ColumnarToRowExec;
import org.apache.spark.sql.execution.InputAdapter;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.WholeStageCodegenExec;
import org.apache.spark.sql.execution.adaptive.TableCacheQueryStageExec;
import org.apache.spark.sql.execution.columnar.InMemoryTableScanExec;
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2ScanRelation;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import scala.collection.immutable.Seq;

/**
 * What a sort node reads from its child and how it sorts it, shared by the node that sorts
 * ({@link GpuSortExec}) and the exchange that sorts, cuts and merges ({@link
 * GpuRangeSortExchangeExec}): the child's columnar batches where the columnar intake can take
 * them, the rows a partition holds by Spark's statistics, and the {@link SortPlan} its tasks run.
 */
final class SortInputs {
  /** Spark's key (read by its UnsafeExternalSorter too) that forces a spill after that many rows. */
  static final String FORCE_SPILL_ROWS_KEY = "spark.shuffle.spill.numElementsForceSpillThreshold";

  private SortInputs() {}

  /**
   * The batches the columnar intake takes from {@code child}, or null where the rows come as
   * rows: with {@code cacheBatches} and where the child is a scan of the in-memory cache, its
   * cached batches read by {@link CachedBatchColumns} (also where Spark's scan would hand out
   * batches itself: it keeps every batch of a task until the task ends); else those of the
   * columnar source below.
   */
  static RDD<ColumnarBatch> columnarInput(SparkPlan child, GpuSortConf conf) {
    boolean columnarIntake = conf.get(GpuSortConf.COLUMNAR_INTAKE);
    // Under adaptive execution the cache's scan may stand in a query stage of its own (Spark
    // 3.5 plans one for a cached relation), whose plan is the scan.
    SparkPlan cacheScan = child instanceof TableCacheQueryStageExec stage ? stage.plan() : child;
    if (columnarIntake && conf.get(GpuSortConf.CACHE_BATCHES)
        && cacheScan instanceof InMemoryTableScanExec scan
        && ColumnarRowWriter.of(child.schema()) != null) {
      RDD<ColumnarBatch> cached = CachedBatchColumns.read(scan);
      if (cached != null) {
        return cached;
      }
    }
    SparkPlan columnar = columnarSource(child, columnarIntake);
    return columnar == null ? null : columnar.executeColumnar();
  }

  /**
   * The child itself when it can hand out batches (the in-memory cache's scan), or the columnar
   * plan under the row conversion Spark put above it for this node (a file scan's batches turned
   * into rows, alone in its codegen stage), when the columnar intake can take its batches
   * (columns {@link ColumnarRowWriter} writes: atomic types) and is on; null otherwise. (The
   * in-memory cache hands out batches of numeric columns only: with a string, binary or decimal
   * column it gives rows.)
   */
  private static SparkPlan columnarSource(SparkPlan child, boolean columnarIntake) {
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

  /**
   * The batches of {@code keyScan} (a plan {@link #keyColumnsScan} made) where it is a columnar
   * scan, for sampling its rows without turning each into a row; null where it hands out rows.
   */
  static RDD<ColumnarBatch> keyColumnBatches(SparkPlan keyScan) {
    SparkPlan columnar = columnarSource(keyScan, true);
    return columnar == null ? null : columnar.executeColumnar();
  }

  /**
   * A plan of its own that reads only the columns {@code order} refers to, from the same source
   * as {@code child}, where the child's rows come from a columnar scan (the in-memory cache,
   * Parquet, ORC, a DSv2 source that prunes columns: each reads the columns it is asked for, and
   * no more) and hold other columns too; null otherwise. The sort's range bounds can be sampled
   * from it for less than a read of every column: its rows are the child's, in the same
   * partitions where the scan splits its input the same way (if not, or where a DSv2 source
   * took a filter into its scan that the plan of the keys alone no longer has, the bounds only
   * balance the output less well: any bounds keep the order).
   */
  static SparkPlan keyColumnsScan(Seq<SortOrder> order, SparkPlan child) {
    if (columnarSource(child, true) == null) {
      return null;
    }
    SparkPlan plan = logicalOrigin(child);
    if (plan == null) {
      return null;
    }
    LogicalPlan source = plan.logicalLink().get();
    if (source instanceof DataSourceV2ScanRelation scan) {
      // A DSv2 scan already pruned to the child's columns: plan the table's relation again, so
      // that the optimizer asks the source for the keys alone (the attributes are the same).
      source = scan.relation();
    }
    AttributeSet keys = AttributeSet.fromAttributeSets(ScalaCollections.list(
        ScalaCollections.asJava(order).stream().map(SortOrder::references).toList()));
    if (keys.isEmpty() || keys.size() >= child.output().size()
        || !keys.subsetOf(source.outputSet())) {
      return null;
    }
    List<NamedExpression> columns = new ArrayList<>();
    for (Attribute key : ScalaCollections.asJava(keys.toSeq())) {
      columns.add(key);
    }
    Project project = new Project(ScalaCollections.list(columns), source);
    return child.session().sessionState().executePlan(project, CommandExecutionMode.ALL())
        .executedPlan();
  }

  /**
   * Expressions over a row of {@code keyScan} (a plan {@link #keyColumnsScan} made) that give a
   * row of {@code child}'s columns: each key column where the child has it, every other column
   * null.
   */
  static List<Expression> widenToChild(SparkPlan keyScan, SparkPlan child) {
    AttributeSet keys = keyScan.outputSet();
    List<Expression> row = new ArrayList<>();
    for (Attribute column : ScalaCollections.asJava(child.output())) {
      row.add(keys.contains(column)
          ? BindReferences.bindReference(column, package$.MODULE$.AttributeSeq(keyScan.output()),
              false)
          : Literal.create(null, column.dataType()));
    }
    return row;
  }

  /**
   * The bytes a row of {@code child} counts as when the range bounds are sampled from its key
   * columns alone: a row's size where every column has a fixed width; else the average Spark's
   * statistics give (a source that reports its rows and bytes, such as a DSv2 scan); 0 where
   * neither is known, and the bounds must be sampled from the rows, which count themselves.
   */
  static long sampledRowBytes(SparkPlan child) {
    StructType schema = child.schema();
    if (Arrays.stream(schema.fields()).allMatch(f -> UnsafeRow.isFixedLength(f.dataType()))) {
      return UnsafeRow.calculateBitSetWidthInBytes(schema.size()) + 8L * schema.size();
    }
    SparkPlan plan = logicalOrigin(child);
    if (plan == null) {
      return 0;
    }
    Statistics stats = plan.logicalLink().get().stats();
    if (stats.rowCount().isEmpty() || stats.rowCount().get().signum() <= 0
        || !stats.sizeInBytes().isValidLong()) {
      return 0;
    }
    long rows = stats.rowCount().get().longValue();
    return Math.max(1, stats.sizeInBytes().longValue() / rows);
  }

  /**
   * Rows a partition of {@code input} holds on average where Spark's statistics know its rows
   * (a cached relation once materialized, a range; not a filter's or a projection's, whose
   * statistics carry sizes only), else 0.
   */
  static long expectedPartitionRows(SparkPlan input, int numPartitions) {
    SparkPlan plan = logicalOrigin(input);
    if (plan == null || numPartitions <= 0) {
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
   * {@code input}, or the plan below the wrappers that pass its rows on as they are (codegen, a
   * row conversion), that a logical plan made (it has a logical link); null if there is none.
   */
  private static SparkPlan logicalOrigin(SparkPlan input) {
    SparkPlan plan = input;
    while (plan.logicalLink().isEmpty()) {
      if (plan instanceof WholeStageCodegenExec stage) {
        plan = stage.child();
      } else if (plan instanceof InputAdapter adapter) {
        plan = adapter.child();
      } else if (plan instanceof ColumnarToRowExec toRows) {
        plan = toRows.child();
      } else {
        return null;
      }
    }
    return plan;
  }

  /**
   * The sort of {@code child}'s rows by {@code order} as tasks run it, with {@code maxPartitions}
   * the most output partitions a global sort chooses by size (0: {@code
   * spark.sql.shuffle.partitions}) and {@code expectedPartitionRows} the rows an input partition
   * is expected to hold (0: unknown).
   */
  static SortPlan plan(Seq<SortOrder> order, SparkPlan child, GpuSortConf conf,
      SortMetrics metrics, int maxPartitions, long expectedPartitionRows) {
    List<SortOrder> orders = ScalaCollections.asJava(order);
    KeySpec keys = KeySpec.of(orders, ScalaCollections.immutable(child.output()),
        conf.get(GpuSortConf.STRING_PREFIX_BYTES));
    SQLConf sqlConf = SQLConf.get();
    long advisoryBytes = JavaUtils.byteStringAsBytes(sqlConf.getConfString(
        "spark.sql.adaptive.advisoryPartitionSizeInBytes", "64MB"));
    return new SortPlan(keys, child.schema(), conf,
        maxPartitions > 0 ? maxPartitions : sqlConf.numShufflePartitions(),
        Math.max(1, advisoryBytes), metrics, forceSpillRows(child), expectedPartitionRows);
  }

  /** Spark's own threshold of rows a sorter holds before it spills regardless of memory. */
  private static int forceSpillRows(SparkPlan child) {
    long rows = child.sparkContext().conf().getLong(FORCE_SPILL_ROWS_KEY, Integer.MAX_VALUE);
    return (int) Math.max(1, Math.min(Integer.MAX_VALUE, rows));
  }
}
