package io.gpusort.sql;

import io.gpusort.compat.ScalaCollections;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.function.Function;
import org.apache.spark.Partitioner;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.rdd.RDD;
import org.apache.spark.rdd.ShuffledRDD;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.execution.UnsafeRowSerializer;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import scala.Product2;
import scala.Tuple2;
import scala.reflect.ClassTag;
import scala.reflect.ClassTag$;

/**
 * The RDD pipelines behind the sort nodes: a local sort of each partition, the global sort that
 * range-shuffles rows then sorts, and the map side of the one that sorts, range-shuffles the
 * sorted runs in chunks, then merges ({@link GpuRangeSortExchangeExec} runs its shuffle).
 */
final class SortPipelines {
  /** Spark's cap on the rows sampled for range boundaries, kept here for the same reason. */
  private static final int MAX_SAMPLE_ROWS = 1_000_000;

  private SortPipelines() {}

  /** Sorts each partition of {@code input}; the partitioning is unchanged. */
  static RDD<InternalRow> sortWithinPartitions(RDD<InternalRow> input, SortPlan plan) {
    return input.toJavaRDD().mapPartitions(rows -> sortPartition(plan, rows), true).rdd();
  }

  /**
   * Orders the whole of {@code input} by range-shuffling its rows and sorting each output
   * partition ({@code global.mode=sort}): partition {@code p}'s rows all sort before {@code p+1}'s.
   */
  static RDD<InternalRow> sortGlobally(RDD<InternalRow> input, SortPlan plan) {
    RangeBounds bounds = computeBounds(input, plan);
    int numOutput = plan.outputPartitions > 0 ? plan.outputPartitions : bounds.numPartitions();
    JavaRDD<Tuple2<Integer, InternalRow>> keyed = input.toJavaRDD().mapPartitionsWithIndex(
        (partition, rows) -> route(plan, bounds, partition, rows), false);
    JavaRDD<Product2<Integer, InternalRow>> shuffled = shuffle(keyed, numOutput, plan);
    return shuffled.mapPartitions(rows -> sortPartition(plan, values(rows)), false).rdd();
  }

  /**
   * The map side of the paper's split-sort-merge ({@code global.mode=merge}): each input
   * partition sorted on the engine and cut at {@code bounds} into chunks, tagged with their output
   * partition (one block of chunks per output partition, each written by a bulk copy). The rows
   * come from {@code batches} (the same rows as columnar batches, for the columnar intake) or,
   * where that is null, from {@code input}.
   */
  static RDD<Tuple2<Integer, RowChunk>> sortAndCut(RDD<InternalRow> input,
      RDD<ColumnarBatch> batches, SortPlan plan, RangeBounds bounds) {
    JavaRDD<Tuple2<Integer, RowChunk>> chunks = batches != null
        ? batches.toJavaRDD().mapPartitionsWithIndex((partition, in) ->
            SortFailures.guardIterator(() -> ExternalRowSorter.sortBatchesIntoChunksInTask(plan,
                in, ColumnarRowWriter.of(plan.inputSchema), bounds, partition)), false)
        : input.toJavaRDD().mapPartitionsWithIndex((partition, rows) ->
            SortFailures.guardIterator(() -> ExternalRowSorter.sortIntoChunksInTask(plan, rows,
                bounds, partition)), false);
    return chunks.rdd();
  }

  /**
   * Sorts each partition of columnar {@code batches} (the columnar intake: rows written from the
   * batches' columns straight into the sort's pages) with rows of {@code schema}.
   */
  static RDD<InternalRow> sortBatchesWithinPartitions(RDD<ColumnarBatch> batches, SortPlan plan) {
    return batches.toJavaRDD().mapPartitions(input -> SortFailures.guardIterator(() ->
        ExternalRowSorter.sortBatchesInTask(plan, input, ColumnarRowWriter.of(plan.inputSchema))),
        true).rdd();
  }

  private static Iterator<InternalRow> sortPartition(SortPlan plan, Iterator<InternalRow> input) {
    return SortFailures.guardIterator(() -> ExternalRowSorter.sortInTask(plan, input, false));
  }

  /** Tags each input row with its output partition, streaming. */
  private static Iterator<Tuple2<Integer, InternalRow>> route(SortPlan plan, RangeBounds bounds,
      int partition, Iterator<InternalRow> input) {
    return SortFailures.guardIterator(() -> new RoutingIterator(plan, bounds, partition, input));
  }

  /** Tags rows with their output partition; a row's tie-breaker is its index in the input. */
  private static final class RoutingIterator implements Iterator<Tuple2<Integer, InternalRow>> {
    private static final int KILL_CHECK_ROWS = 4096;
    private final RangeBounds bounds;
    private final int partition;
    private final Iterator<InternalRow> input;
    private final RowKeys keys;
    private final long[] words;
    private final TaskContext task = TaskContext.get();
    private long index;

    RoutingIterator(SortPlan plan, RangeBounds bounds, int partition,
        Iterator<InternalRow> input) {
      this.bounds = bounds;
      this.partition = partition;
      this.input = input;
      this.keys = new RowKeys(plan);
      this.words = new long[keys.numWords];
    }

    @Override
    public boolean hasNext() {
      return input.hasNext();
    }

    @Override
    public Tuple2<Integer, InternalRow> next() {
      if (task != null && (index & (KILL_CHECK_ROWS - 1)) == KILL_CHECK_ROWS - 1) {
        task.killTaskIfInterrupted();
      }
      UnsafeRow row = keys.asUnsafe(input.next());
      keys.encoder.encode(row, words);
      int target = bounds.partitionOf(words, row, partition, index++, keys.ordering);
      return new Tuple2<>(target, row);
    }
  }

  /**
   * The range bounds of a global sort of {@code input}: a job that samples each partition's keys,
   * then the bounds chosen from the samples on the driver, as many output partitions as the
   * sampled bytes call for ({@code advisoryPartitionBytes} each, at most {@code
   * maxAutoPartitions}) unless {@code outputPartitions} fixes them.
   */
  static RangeBounds computeBounds(RDD<InternalRow> input, SortPlan plan) {
    return computeBounds(input, plan, 0);
  }

  /**
   * As above, each sampled row counted as {@code rowBytes} of input where that is positive (the
   * rows sampled are the key columns alone, their rows all of that size), else as its own size.
   */
  static RangeBounds computeBounds(RDD<InternalRow> input, SortPlan plan, long rowBytes) {
    return computeBounds(input, plan, rowBytes, null);
  }

  /**
   * As above, where {@code widen} is not null each row first made into a row of {@code plan}'s
   * input by these expressions (bound to the rows sampled: the key columns alone, placed where
   * the sort's input has them, every other column null).
   */
  static RangeBounds computeBounds(RDD<InternalRow> input, SortPlan plan, long rowBytes,
      List<Expression> widen) {
    int perPartition = samplePerPartition(input.getNumPartitions(), plan);
    List<RangeBounds.PartitionSample> samples = input.toJavaRDD().mapPartitionsWithIndex(
        (partition, rows) -> Collections.singletonList(SortFailures.guard(() ->
            RangeBounds.sample(widened(rows, widen), partition, perPartition, new RowKeys(plan),
                TaskContext.get()))).iterator(), false).collect();
    return chooseBounds(samples, plan, rowBytes);
  }

  /**
   * As {@link #computeBounds(RDD, SortPlan, long, List)}, from batches of the key columns alone
   * (a columnar scan's), rows of {@code rowBytes} each: only the rows sampled are read, and made
   * into rows of {@code plan}'s input by {@code widen}.
   */
  static RangeBounds computeBoundsFromBatches(RDD<ColumnarBatch> input, SortPlan plan,
      long rowBytes, List<Expression> widen) {
    int perPartition = samplePerPartition(input.getNumPartitions(), plan);
    List<RangeBounds.PartitionSample> samples = input.toJavaRDD().mapPartitionsWithIndex(
        (partition, batches) -> Collections.singletonList(SortFailures.guard(() ->
            RangeBounds.sampleBatches(batches, partition, perPartition, new RowKeys(plan),
                projection(widen), TaskContext.get()))).iterator(), false)
        .collect();
    return chooseBounds(samples, plan, rowBytes);
  }

  /** A task's projection of {@code exprs}; null where they are null. */
  private static UnsafeProjection projection(List<Expression> exprs) {
    return exprs == null ? null
        : UnsafeProjection.create(ScalaCollections.list(exprs));
  }

  /** {@code rows}, each made into a row by {@code widen}'s projection (where not null). */
  private static Iterator<InternalRow> widened(Iterator<InternalRow> rows,
      List<Expression> widen) {
    UnsafeProjection projection = projection(widen);
    return projection == null ? rows : mapped(rows, projection::apply);
  }

  /** Rows to sample from each of {@code numInput} partitions (3x over, as Spark's sketch). */
  private static int samplePerPartition(int numInput, SortPlan plan) {
    int maxOutput = plan.outputPartitions > 0 ? plan.outputPartitions : plan.maxAutoPartitions;
    long sampleRows = Math.min((long) plan.sampleRowsPerPartition * maxOutput, MAX_SAMPLE_ROWS);
    return (int) Math.min(MAX_SAMPLE_ROWS, Math.ceil(3.0 * sampleRows / Math.max(1, numInput)));
  }

  /**
   * Bounds from the partitions' samples: as many output partitions as set, else one per advisory
   * size of input ({@code rowBytes} a row where positive, else the bytes the samples counted).
   */
  private static RangeBounds chooseBounds(List<RangeBounds.PartitionSample> samples,
      SortPlan plan, long rowBytes) {
    long totalRows = 0;
    long totalBytes = 0;
    for (RangeBounds.PartitionSample s : samples) {
      totalRows += s.numRows;
      totalBytes += s.numBytes;
    }
    if (rowBytes > 0) {
      totalBytes = totalRows * rowBytes;
    }
    int numOutput = plan.outputPartitions;
    if (numOutput == 0) {
      long bySize = (totalBytes + plan.advisoryPartitionBytes - 1) / plan.advisoryPartitionBytes;
      numOutput = (int) Math.max(1, Math.min(bySize, plan.maxAutoPartitions));
    }
    RowKeys driverSide = new RowKeys(plan);
    return RangeBounds.choose(new ArrayList<>(samples), totalRows == 0 ? 1 : numOutput,
        plan.keys.layout.needsTieBreak(), driverSide.ordering);
  }

  private static JavaRDD<Product2<Integer, InternalRow>> shuffle(
      JavaRDD<Tuple2<Integer, InternalRow>> keyed, int numPartitions, SortPlan plan) {
    ClassTag<Object> any = ClassTag$.MODULE$.Any();
    @SuppressWarnings({"unchecked", "rawtypes"})
    ShuffledRDD<Integer, InternalRow, InternalRow> shuffled = new ShuffledRDD(keyed.rdd(),
        new PartitionIdPassThrough(numPartitions), any, any, any);
    // Rows are serialized as they are written (UnsafeRowSerializer relocates), so the reused row
    // objects of the map side need no copy.
    shuffled.setSerializer(new UnsafeRowSerializer(plan.numFields(), null));
    @SuppressWarnings({"unchecked", "rawtypes"})
    JavaRDD<Product2<Integer, InternalRow>> result = (JavaRDD) shuffled.toJavaRDD();
    return result;
  }

  /** The values of a shuffle's (output partition, value) pairs. */
  static <V> Iterator<V> values(Iterator<? extends Product2<Integer, V>> pairs) {
    return mapped(pairs, Product2::_2);
  }

  /** {@code in}, each element {@code f} of it, as it is read. */
  static <A, B> Iterator<B> mapped(Iterator<? extends A> in,
      Function<? super A, ? extends B> f) {
    return new Iterator<>() {
      @Override
      public boolean hasNext() {
        return in.hasNext();
      }

      @Override
      public B next() {
        return f.apply(in.next());
      }
    };
  }

  /** The shuffle's partitioner: the map side already computed each row's partition. */
  static final class PartitionIdPassThrough extends Partitioner {
    private static final long serialVersionUID = 1L;
    private final int numPartitions;

    PartitionIdPassThrough(int numPartitions) {
      this.numPartitions = numPartitions;
    }

    @Override
    public int numPartitions() {
      return numPartitions;
    }

    @Override
    public int getPartition(Object key) {
      return (Integer) key;
    }
  }
}
