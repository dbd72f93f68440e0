package io.gpusort.sql;

import io.gpusort.compat.ScalaCollections;
import io.gpusort.compat.ShuffleExchangeBase;
import io.gpusort.config.GpuSortConf;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.spark.MapOutputStatistics;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.SortOrder;
import org.apache.spark.sql.catalyst.plans.logical.Statistics;
import org.apache.spark.sql.catalyst.plans.physical.Partitioning;
import org.apache.spark.sql.catalyst.plans.physical.UnknownPartitioning;
import org.apache.spark.sql.execution.CoalescedPartitionSpec;
import org.apache.spark.sql.execution.ShufflePartitionSpec;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.exchange.REPARTITION_BY_COL$;
import org.apache.spark.sql.execution.exchange.REPARTITION_BY_NUM$;
import org.apache.spark.sql.execution.exchange.ShuffleExchangeExec;
import org.apache.spark.sql.execution.exchange.ShuffleExchangeLike;
import org.apache.spark.sql.execution.exchange.ShuffleOrigin;
import org.apache.spark.sql.execution.metric.SQLMetric;
import org.apache.spark.sql.execution.metric.SQLMetrics;
import org.apache.spark.sql.execution.metric.SQLShuffleReadMetricsReporter;
import org.apache.spark.sql.execution.metric.SQLShuffleWriteMetricsReporter;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import scala.Option;
import scala.Tuple2;
import scala.collection.immutable.Seq;
import scala.concurrent.Future;
import scala.reflect.ClassTag;
import scala.reflect.ClassTag$;

/**
 * A global sort as one Spark exchange: the paper's split-sort-merge at cluster scale
 * ({@code spark.gpusort.global.mode=merge}). The map side sorts each input partition on the
 * engine and cuts the sorted rows at the range bounds into blocks (one per output partition,
 * written to Spark's shuffle a chunk at a time by a bulk copy); the read side merges each output
 * partition's blocks by their keys. Its output is globally ordered: partition {@code p}'s rows
 * all sort before {@code p+1}'s and each partition is sorted.
 *
 * <p>Being a {@link ShuffleExchangeLike}, it is a query stage to adaptive execution: the UI and
 * {@code EXPLAIN} show it, the stage's map statistics drive AQE's coalescing of small output
 * partitions (a coalesced read merges the blocks of several adjacent partitions, which keeps the
 * order), and an identical exchange elsewhere in the plan is reused. Its origin is {@code
 * REPARTITION_BY_COL}: coalescable, but never split by skew handling nor read locally, either of
 * which would break the order ({@code REPARTITION_BY_NUM} where the user fixed the count). The
 * bounds come from a sampling job when the shuffle's dependency is first needed, as Spark's range
 * exchange does; above a columnar scan it reads the key columns alone where it can.
 *
 * <p>Rows with equal keys may be split between neighbouring partitions (which keeps heavy keys
 * balanced), so the exchange claims no partitioning, only its ordering; and as a coalesced read
 * does not report the ordering, nothing above should rely on it: the planner puts this node where
 * a global sort was, whose order the query's result already has.
 */
public final class GpuRangeSortExchangeExec extends ShuffleExchangeBase {
  private static final long serialVersionUID = 1L;
  private static final String DATA_SIZE = "dataSize";
  private static final String ROWS_WRITTEN = "rowsWritten";
  private static final AtomicLong KEY_COLUMN_SAMPLES = new AtomicLong();

  private final Seq<SortOrder> order;
  private final int maxPartitions;
  private final Map<String, String> settings;
  private final SparkPlan child;

  private transient Future<MapOutputStatistics> mapOutputStatistics;
  private transient ShuffleDependency<Integer, RowChunk, RowChunk> dependency;
  private transient SortPlan reducePlan;
  private transient SortMetrics sortMetrics;
  private transient scala.collection.immutable.Map<String, SQLMetric> readMetrics;
  private transient scala.collection.immutable.Map<String, SQLMetric> writeMetrics;
  private transient scala.collection.immutable.Map<String, SQLMetric> allMetrics;

  /**
   * @param order the sort's keys
   * @param maxPartitions the most output partitions it chooses by the sampled size (Spark's range
   *     exchange's count where it replaces one; 0: {@code spark.sql.shuffle.partitions});
   *     {@code spark.gpusort.global.partitions} fixes the count instead
   * @param settings the {@code spark.gpusort.*} settings read when the plan was made
   * @param child the rows to sort
   */
  public GpuRangeSortExchangeExec(Seq<SortOrder> order, int maxPartitions,
      Map<String, String> settings, SparkPlan child) {
    this.order = order;
    this.maxPartitions = maxPartitions;
    this.settings = settings;
    this.child = child;
  }

  public Seq<SortOrder> order() {
    return order;
  }

  @Override
  public SparkPlan child() {
    return child;
  }

  @Override
  public SparkPlan withNewChildInternal(SparkPlan newChild) {
    return new GpuRangeSortExchangeExec(order, maxPartitions, settings, newChild);
  }

  // ---- the shuffle

  /**
   * The shuffle of sorted blocks, made once: the bounds are sampled here (a job), so the number of
   * output partitions is known from here on.
   */
  private synchronized ShuffleDependency<Integer, RowChunk, RowChunk> dependency() {
    if (dependency == null) {
      // The plugin's own failures here (planning, the bounds' sampling) name the switch.
      dependency = SortFailures.guard(this::newDependency);
    }
    return dependency;
  }

  private ShuffleDependency<Integer, RowChunk, RowChunk> newDependency() {
    GpuSortConf conf = GpuSortConf.of(settings);
    RDD<ColumnarBatch> batches = SortInputs.columnarInput(child, conf);
    RDD<InternalRow> rows = child.execute();
    int numInput = batches != null ? batches.getNumPartitions() : rows.getNumPartitions();
    SortPlan mapPlan = SortInputs.plan(order, child, conf, sortMetrics(), maxPartitions,
        SortInputs.expectedPartitionRows(child, numInput));
    // The reduce side's partitions are the exchange's: no estimate for them.
    SortPlan plan = SortInputs.plan(order, child, conf, sortMetrics(), maxPartitions, 0);
    RangeBounds bounds = computeBounds(rows, plan);
    int numOutput = plan.outputPartitions > 0 ? plan.outputPartitions : bounds.numPartitions();
    RDD<Tuple2<Integer, RowChunk>> chunks = SortPipelines.sortAndCut(rows, batches, mapPlan,
        bounds);
    SQLMetric dataSize = metric(DATA_SIZE);
    SQLMetric rowsWritten = metric(ROWS_WRITTEN);
    RDD<Tuple2<Integer, RowChunk>> counted = chunks.toJavaRDD().mapPartitions(
        it -> new ChunkCounter(it, dataSize, rowsWritten), true).rdd();
    ClassTag<Integer> intTag = ClassTag$.MODULE$.apply(Integer.class);
    ClassTag<RowChunk> chunkTag = ClassTag$.MODULE$.apply(RowChunk.class);
    ShuffleDependency<Integer, RowChunk, RowChunk> made = new ShuffleDependency<>(counted,
        new SortPipelines.PartitionIdPassThrough(numOutput),
        new RowChunkSerializer(plan.packRows),
        Option.empty(), Option.empty(), false,
        ShuffleExchangeExec.createShuffleWriteProcessor(writeMetrics()), intTag, chunkTag,
        chunkTag);
    reducePlan = plan;
    SQLMetric partitions = metric("numPartitions");
    partitions.set(numOutput);
    SQLMetrics.postDriverMetricUpdates(sparkContext(),
        sparkContext().getLocalProperty("spark.sql.execution.id"),
        ScalaCollections.list(List.of(partitions)));
    return made;
  }

  /**
   * The range bounds, sampled from a scan of the key columns alone where the child is a columnar
   * scan whose rows have a known size (one fixed size, or an average its statistics give: the
   * sampled rows then count the input's bytes); else from the child's rows. The rows sampled
   * from the key scan are made into rows of the child's columns (the others null), so that
   * where keys are truncated (strings, binary) the bounds' rows compare with the child's.
   */
  private RangeBounds computeBounds(RDD<InternalRow> rows, SortPlan plan) {
    long rowBytes = SortInputs.sampledRowBytes(child);
    SparkPlan keyScan = rowBytes > 0 ? SortInputs.keyColumnsScan(order, child) : null;
    if (keyScan == null) {
      return SortPipelines.computeBounds(rows, plan);
    }
    KEY_COLUMN_SAMPLES.incrementAndGet();
    List<Expression> widen = SortInputs.widenToChild(keyScan, child);
    RDD<ColumnarBatch> keyBatches = SortInputs.keyColumnBatches(keyScan);
    return keyBatches != null
        ? SortPipelines.computeBoundsFromBatches(keyBatches, plan, rowBytes, widen)
        : SortPipelines.computeBounds(keyScan.execute(), plan, rowBytes, widen);
  }

  /** Range bounds this process sampled from the key columns alone, for tests. */
  static long keyColumnSamples() {
    return KEY_COLUMN_SAMPLES.get();
  }

  @Override
  public synchronized Future<MapOutputStatistics> mapOutputStatisticsFuture() {
    if (mapOutputStatistics == null) {
      ShuffleDependency<Integer, RowChunk, RowChunk> dep = dependency();
      if (dep.rdd().getNumPartitions() == 0) {
        mapOutputStatistics = Future.successful(null);
      } else {
        @SuppressWarnings("unchecked")
        Future<MapOutputStatistics> submitted =
            (Future<MapOutputStatistics>) (Object) sparkContext().submitMapStage(dep);
        mapOutputStatistics = submitted;
      }
    }
    return mapOutputStatistics;
  }

  @Override
  public int numMappers() {
    return dependency().rdd().getNumPartitions();
  }

  @Override
  public int numPartitions() {
    return dependency().partitioner().numPartitions();
  }

  @Override
  public int shuffleId() {
    return dependency().shuffleId();
  }

  @Override
  public Option<Object> advisoryPartitionSize() {
    return Option.empty();
  }

  /**
   * {@code REPARTITION_BY_COL}: adaptive execution may coalesce the output partitions, but never
   * splits one for skew nor reads one locally (either would break the order). Where {@code
   * spark.gpusort.global.partitions} fixes their number, {@code REPARTITION_BY_NUM}: kept as
   * asked, as for Spark's {@code repartitionByRange(n)}.
   */
  @Override
  public ShuffleOrigin shuffleOrigin() {
    return GpuSortConf.of(settings).get(GpuSortConf.OUTPUT_PARTITIONS) > 0
        ? REPARTITION_BY_NUM$.MODULE$ : REPARTITION_BY_COL$.MODULE$;
  }

  @Override
  public RDD<InternalRow> getShuffleRDD(ShufflePartitionSpec[] specs) {
    ShuffleDependency<Integer, RowChunk, RowChunk> dep = dependency();
    return new MergedBlocksRDD(dep, specs, readMetrics(), reducePlan, rowsPerOutputPartition(dep));
  }

  /**
   * Rows the map side wrote for each output partition on average, once its stage ran (adaptive
   * execution reads the shuffle after it); 0 before.
   */
  private long rowsPerOutputPartition(ShuffleDependency<Integer, RowChunk, RowChunk> dep) {
    long rows = metric(ROWS_WRITTEN).value();
    int n = dep.partitioner().numPartitions();
    return rows <= 0 || n <= 0 ? 0 : (rows + n - 1) / n;
  }

  @Override
  public RDD<InternalRow> doExecute() {
    ShuffleDependency<Integer, RowChunk, RowChunk> dep = dependency();
    int n = dep.partitioner().numPartitions();
    ShufflePartitionSpec[] specs = new ShufflePartitionSpec[n];
    for (int p = 0; p < n; p++) {
      specs[p] = new CoalescedPartitionSpec(p, p + 1, Option.empty());
    }
    return new MergedBlocksRDD(dep, specs, readMetrics(), reducePlan, rowsPerOutputPartition(dep));
  }

  @Override
  public Statistics runtimeStatistics() {
    long size = metric(DATA_SIZE).value();
    long rows = metric(ROWS_WRITTEN).value();
    return new Statistics(scala.math.BigInt.apply(size),
        Option.apply(scala.math.BigInt.apply(rows)), Statistics.apply$default$3(), false);
  }

  // ---- what the planner sees

  @Override
  public Seq<SortOrder> outputOrdering() {
    return order;
  }

  @Override
  public Partitioning outputPartitioning() {
    return new UnknownPartitioning(0);
  }

  @Override
  public String nodeName() {
    return "GpuRangeSortExchange";
  }

  @Override
  public String simpleString(int maxFields) {
    return "GpuRangeSortExchange " + order.mkString("[", ", ", "]")
        + (maxPartitions > 0 ? ", at most " + maxPartitions + " partitions" : "")
        + ", [plan_id=" + id() + "]";
  }

  // ---- metrics: one map, made once (the UI and the tasks must see the same accumulators)

  @Override
  public synchronized scala.collection.immutable.Map<String, SQLMetric> metrics() {
    if (allMetrics == null) {
      sortMetrics = SortMetrics.create(sparkContext());
      readMetrics = SQLShuffleReadMetricsReporter.createShuffleReadMetrics(sparkContext());
      writeMetrics = SQLShuffleWriteMetricsReporter.createShuffleWriteMetrics(sparkContext());
      Map<String, SQLMetric> all = new LinkedHashMap<>(sortMetrics.byKey());
      all.put(DATA_SIZE, SQLMetrics.createSizeMetric(sparkContext(), "data size", -1L));
      all.put(ROWS_WRITTEN, SQLMetrics.createMetric(sparkContext(), "rows written to the shuffle"));
      all.put("numPartitions", SQLMetrics.createMetric(sparkContext(), "number of partitions"));
      all.putAll(ScalaCollections.asJava(readMetrics));
      all.putAll(ScalaCollections.asJava(writeMetrics));
      allMetrics = ScalaCollections.map(all);
    }
    return allMetrics;
  }

  private SQLMetric metric(String key) {
    return metrics().apply(key);
  }

  private synchronized SortMetrics sortMetrics() {
    metrics();
    return sortMetrics;
  }

  private synchronized scala.collection.immutable.Map<String, SQLMetric> readMetrics() {
    metrics();
    return readMetrics;
  }

  private synchronized scala.collection.immutable.Map<String, SQLMetric> writeMetrics() {
    metrics();
    return writeMetrics;
  }

  // ---- Product: the constructor's arguments, which makeCopy and canonicalization rebuild it from

  @Override
  public int productArity() {
    return 4;
  }

  @Override
  public Object productElement(int n) {
    return switch (n) {
      case 0 -> order;
      case 1 -> maxPartitions;
      case 2 -> settings;
      case 3 -> child;
      default -> throw new IndexOutOfBoundsException(n);
    };
  }

  @Override
  public boolean canEqual(Object that) {
    return that instanceof GpuRangeSortExchangeExec;
  }

  /** Structural, as a case class's: the reuse of exchanges compares canonical plans by it. */
  @Override
  public boolean equals(Object that) {
    return this == that || that instanceof GpuRangeSortExchangeExec other
        && maxPartitions == other.maxPartitions && order.equals(other.order)
        && settings.equals(other.settings) && child.equals(other.child);
  }

  @Override
  public int hashCode() {
    return Objects.hash(order, maxPartitions, settings, child);
  }

  /** Counts the rows and bytes of the map side's chunks as they go to the shuffle. */
  private static final class ChunkCounter implements java.util.Iterator<Tuple2<Integer, RowChunk>> {
    private final java.util.Iterator<Tuple2<Integer, RowChunk>> chunks;
    private final SQLMetric dataSize;
    private final SQLMetric rowsWritten;

    ChunkCounter(java.util.Iterator<Tuple2<Integer, RowChunk>> chunks, SQLMetric dataSize,
        SQLMetric rowsWritten) {
      this.chunks = chunks;
      this.dataSize = dataSize;
      this.rowsWritten = rowsWritten;
    }

    @Override
    public boolean hasNext() {
      return chunks.hasNext();
    }

    @Override
    public Tuple2<Integer, RowChunk> next() {
      Tuple2<Integer, RowChunk> next = chunks.next();
      dataSize.add(next._2().usedBytes());
      rowsWritten.add(next._2().numRows());
      return next;
    }
  }
}
