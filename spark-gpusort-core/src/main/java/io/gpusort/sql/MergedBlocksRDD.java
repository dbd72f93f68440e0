package io.gpusort.sql;

import io.gpusort.compat.ScalaCollections;
import java.util.List;
import org.apache.spark.Dependency;
import org.apache.spark.Partition;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.rdd.RDD;
import org.apache.spark.shuffle.ShuffleReader;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.execution.CoalescedMapperPartitionSpec;
import org.apache.spark.sql.execution.CoalescedPartitionSpec;
import org.apache.spark.sql.execution.PartialMapperPartitionSpec;
import org.apache.spark.sql.execution.PartialReducerPartitionSpec;
import org.apache.spark.sql.execution.ShufflePartitionSpec;
import org.apache.spark.sql.execution.metric.SQLMetric;
import org.apache.spark.sql.execution.metric.SQLShuffleReadMetricsReporter;
import scala.Product2;
import scala.collection.Iterator;
import scala.reflect.ClassTag$;

/**
 * The read side of {@link GpuRangeSortExchangeExec}: one partition per partition spec (one output
 * partition of the exchange, or several adjacent ones where adaptive execution coalesced them),
 * whose blocks are fetched from every map side and merged by their keys in one sort. Blocks arrive
 * in any order; the merge does not depend on it. Adjacent output partitions hold adjacent key
 * ranges, so one sort over several of them is their concatenation in order.
 */
final class MergedBlocksRDD extends RDD<InternalRow> {
  private static final long serialVersionUID = 1L;

  private final ShuffleDependency<Integer, RowChunk, RowChunk> dependency;
  private final ShufflePartitionSpec[] specs;
  private final scala.collection.immutable.Map<String, SQLMetric> readMetrics;
  private final SortPlan plan;
  /** Rows the map side wrote for each output partition on average; 0 where not known. */
  private final long rowsPerOutputPartition;

  /**
   * @param rowsPerOutputPartition rows the map side wrote for each output partition on average
   *     (the bounds balance them), from which a reducer sizes its run's index; 0 where not known
   */
  MergedBlocksRDD(ShuffleDependency<Integer, RowChunk, RowChunk> dependency,
      ShufflePartitionSpec[] specs, scala.collection.immutable.Map<String, SQLMetric> readMetrics,
      SortPlan plan, long rowsPerOutputPartition) {
    super(dependency.rdd().context(),
        ScalaCollections.list(List.<Dependency<?>>of(dependency)),
        ClassTag$.MODULE$.apply(InternalRow.class));
    this.dependency = dependency;
    this.specs = specs;
    this.readMetrics = readMetrics;
    this.plan = plan;
    this.rowsPerOutputPartition = rowsPerOutputPartition;
  }

  /** One spec of the read. */
  private record SpecPartition(int index, ShufflePartitionSpec spec) implements Partition {
    private static final long serialVersionUID = 1L;
  }

  @Override
  public Partition[] getPartitions() {
    Partition[] partitions = new Partition[specs.length];
    for (int i = 0; i < specs.length; i++) {
      partitions[i] = new SpecPartition(i, specs[i]);
    }
    return partitions;
  }

  /**
   * The map tasks {@code [start, end)}, then the output partitions {@code [start, end)}, a spec
   * reads, as Spark's reader of a shuffle's rows maps each kind of spec.
   */
  private static int[] range(ShufflePartitionSpec spec) {
    if (spec instanceof CoalescedPartitionSpec s) {
      return new int[] {0, Integer.MAX_VALUE, s.startReducerIndex(), s.endReducerIndex()};
    } else if (spec instanceof PartialReducerPartitionSpec s) {
      return new int[] {s.startMapIndex(), s.endMapIndex(), s.reducerIndex(),
          s.reducerIndex() + 1};
    } else if (spec instanceof PartialMapperPartitionSpec s) {
      return new int[] {s.mapIndex(), s.mapIndex() + 1, s.startReducerIndex(),
          s.endReducerIndex()};
    } else if (spec instanceof CoalescedMapperPartitionSpec s) {
      return new int[] {s.startMapIndex(), s.endMapIndex(), 0, s.numReducers()};
    }
    throw new IllegalArgumentException("a partition spec of " + spec.getClass().getName());
  }

  @Override
  public Iterator<InternalRow> compute(Partition split, TaskContext context) {
    ShufflePartitionSpec spec = ((SpecPartition) split).spec();
    // [start, end) of map tasks, then of output partitions, as Spark's reader of a shuffle's rows
    // maps each kind of spec.
    int[] range = range(spec);
    SQLShuffleReadMetricsReporter metrics = new SQLShuffleReadMetricsReporter(
        context.taskMetrics().createTempShuffleReadMetrics(), readMetrics);
    ShuffleReader<Integer, RowChunk> reader = SparkEnv.get().shuffleManager().getReader(
        dependency.shuffleHandle(), range[0], range[1], range[2], range[3], context, metrics);
    @SuppressWarnings("unchecked")
    Iterator<Product2<Integer, RowChunk>> blocks =
        (Iterator<Product2<Integer, RowChunk>>) (Object) reader.read();
    // Whole output partitions read from every map task: their rows are about known.
    long expectedRows = spec instanceof CoalescedPartitionSpec
        ? rowsPerOutputPartition * (range[3] - range[2]) : 0;
    java.util.Iterator<InternalRow> rows = SortFailures.guardIterator(() ->
        ExternalRowSorter.sortChunksInTask(plan, SortPipelines.values(ScalaCollections.asJava(
            blocks)), expectedRows));
    return ScalaCollections.asScala(rows);
  }
}
