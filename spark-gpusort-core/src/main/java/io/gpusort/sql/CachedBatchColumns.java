package io.gpusort.sql;

import io.gpusort.compat.ScalaCollections;
import io.gpusort.memory.Tally;
import java.util.Iterator;
import java.util.List;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.columnar.CachedBatch;
import org.apache.spark.sql.execution.columnar.ColumnAccessor$;
import org.apache.spark.sql.execution.columnar.DefaultCachedBatch;
import org.apache.spark.sql.execution.columnar.DefaultCachedBatchSerializer;
import org.apache.spark.sql.execution.columnar.InMemoryRelation;
import org.apache.spark.sql.execution.columnar.InMemoryTableScanExec;
import org.apache.spark.sql.execution.metric.SQLMetric;
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * The batches of Spark's in-memory cache as column vectors, read by the sort itself. Where Spark
 * would hand the sort rows (a cached relation with string or binary columns: Spark 4.0's default
 * cache serializer decodes only numeric columns into vectors; for any other it converts each
 * batch into rows, one accessor call per field and an {@code UnsafeProjection} per row, which the
 * sort then copies again: about half of a task's time in a sort of cached string-keyed rows on
 * the H200 host), numeric columns are decoded by Spark's own accessor ({@code
 * ColumnAccessor.decompress}, what its columnar scan of such a cache runs) and string and binary
 * columns are read where they lie ({@link CachedBytesVector}), so the columnar intake writes each
 * row once.
 *
 * <p>A cache of numeric columns only, which Spark's scan does hand out as batches, is read here
 * too: that scan allocates new vectors for every batch and closes each only when the task ends
 * (a task completion listener per batch), so a task holds its whole partition decoded until it
 * ends, and a first query, whose heap has not grown yet, spends its time copying them between
 * generations (3.9 s of GC in the tasks of a first cached sort of 1e8 rows on the H100 host, none
 * in later runs). Here each task decodes into one set of vectors, reused batch after batch: the
 * intake is done with a batch before it asks for the next, as with Spark's Parquet reader.
 *
 * <p>Taken only where the scan's relation was cached by {@code DefaultCachedBatchSerializer} and
 * every column it outputs is of a type read here; the scan's pushed-down predicates, which only
 * skip batches by their statistics, are not applied (a filter above the scan still is).
 */
final class CachedBatchColumns {
  private static final Tally BATCHES_READ = new Tally();

  private CachedBatchColumns() {}

  /**
   * The cached batches of {@code scan} as batches of its output columns, in its partitions, or
   * null where this does not read them (another serializer, a column of another type).
   */
  static RDD<ColumnarBatch> read(InMemoryTableScanExec scan) {
    InMemoryRelation relation = scan.relation();
    if (!(relation.cacheBuilder().serializer() instanceof DefaultCachedBatchSerializer)) {
      return null;
    }
    List<Attribute> cached = ScalaCollections.asJava(relation.output());
    List<Attribute> wanted = ScalaCollections.asJava(scan.output());
    int[] columns = new int[wanted.size()];
    DataType[] types = new DataType[wanted.size()];
    for (int i = 0; i < columns.length; i++) {
      Attribute attribute = wanted.get(i);
      columns[i] = indexOf(cached, attribute);
      types[i] = attribute.dataType();
      if (columns[i] < 0 || !(isBytes(types[i]) || isNumeric(types[i]))) {
        return null;
      }
    }
    SQLMetric outputRows = scan.longMetric("numOutputRows");
    return relation.cacheBuilder().cachedColumnBuffers().toJavaRDD()
        .mapPartitions(new Decode(columns, types, outputRows)).rdd();
  }

  /**
   * {@code batches} of a cache built by {@code DefaultCachedBatchSerializer}, of columns of
   * {@code types} in order, decoded as a task's read of the cache decodes them, into vectors reused
   * batch after batch; counted nowhere (the row path's warm-up runs the tasks' decoding with it).
   */
  static Iterator<ColumnarBatch> decoded(Iterator<CachedBatch> batches, DataType[] types) {
    int[] columns = new int[types.length];
    for (int i = 0; i < columns.length; i++) {
      columns[i] = i;
    }
    return new Decode(columns, types, null).call(batches);
  }

  /** Batches of this process decoded here for tasks (for tests). */
  static long batchesRead() {
    return BATCHES_READ.sum();
  }

  private static int indexOf(List<Attribute> cached, Attribute attribute) {
    for (int i = 0; i < cached.size(); i++) {
      if (cached.get(i).exprId().equals(attribute.exprId())) {
        return i;
      }
    }
    return -1;
  }

  private static boolean isBytes(DataType type) {
    return type instanceof StringType || type instanceof BinaryType;
  }

  /** The types Spark's cache decodes into vectors itself. */
  private static boolean isNumeric(DataType type) {
    return type instanceof BooleanType || type instanceof ByteType || type instanceof ShortType
        || type instanceof IntegerType || type instanceof LongType || type instanceof FloatType
        || type instanceof DoubleType;
  }

  /**
   * A partition's cached batches into columnar batches of the wanted columns, one after another
   * in the same numeric vectors (grown when a batch has more rows): a batch handed out is valid
   * until the next is asked for.
   */
  private static final class Decode
      implements FlatMapFunction<Iterator<CachedBatch>, ColumnarBatch> {
    private static final long serialVersionUID = 1L;
    private final int[] columns;
    private final DataType[] types;
    /** The scan's row count, or null for batches decoded outside a task's scan. */
    private final SQLMetric outputRows;

    Decode(int[] columns, DataType[] types, SQLMetric outputRows) {
      this.columns = columns;
      this.types = types;
      this.outputRows = outputRows;
    }

    @Override
    public Iterator<ColumnarBatch> call(Iterator<CachedBatch> batches) {
      OnHeapColumnVector[] reused = new OnHeapColumnVector[columns.length];
      int[] capacities = new int[columns.length];
      return SortPipelines.mapped(batches,
          batch -> decode((DefaultCachedBatch) batch, reused, capacities));
    }

    private ColumnarBatch decode(DefaultCachedBatch batch, OnHeapColumnVector[] reused,
        int[] capacities) {
      int numRows = batch.numRows();
      ColumnVector[] vectors = new ColumnVector[columns.length];
      for (int i = 0; i < columns.length; i++) {
        byte[] buffer = batch.buffers()[columns[i]];
        if (isBytes(types[i])) {
          vectors[i] = CachedBytesVector.decode(buffer, numRows, types[i]);
        } else {
          OnHeapColumnVector vector = reused[i];
          if (vector == null || capacities[i] < numRows) {
            capacities[i] = Math.max(1, numRows);
            vector = new OnHeapColumnVector(capacities[i], types[i]);
            reused[i] = vector;
          } else {
            // Clears the last batch's null flags; values are all written again.
            vector.reset();
          }
          ColumnAccessor$.MODULE$.decompress(buffer, vector, types[i], numRows);
          vectors[i] = vector;
        }
      }
      if (outputRows != null) {
        outputRows.add(numRows);
        BATCHES_READ.increment();
      }
      return new ColumnarBatch(vectors, numRows);
    }
  }
}
