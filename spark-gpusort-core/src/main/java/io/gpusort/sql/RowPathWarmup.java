package io.gpusort.sql;

import io.gpusort.compat.ScalaCollections;
import io.gpusort.config.GpuSortConf;
import io.gpusort.engine.Engines;
import io.gpusort.engine.SortEngine;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.BooleanSupplier;
import org.apache.spark.SparkConf;
import org.apache.spark.memory.TaskMemoryManager;
import org.apache.spark.memory.UnifiedMemoryManager;
import org.apache.spark.serializer.SerializationStream;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Ascending$;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.NamedExpression$;
import org.apache.spark.sql.catalyst.expressions.NullsFirst$;
import org.apache.spark.sql.catalyst.expressions.SortOrder;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.columnar.CachedBatch;
import org.apache.spark.sql.execution.columnar.ColumnBuilder;
import org.apache.spark.sql.execution.columnar.ColumnBuilder$;
import org.apache.spark.sql.execution.columnar.DefaultCachedBatch;
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.Tuple2;
import scala.reflect.ClassTag;
import scala.reflect.ClassTag$;

/**
 * The row path's first use, run off the task path once a GPU engine has warmed up (the executor's
 * start with the plugin, else a local session's first touch of ours, {@link EarlyStart}): a few
 * rounds of the sorts tasks run (columnar batches and rows sorted within a partition, the global
 * sort's map side cut into chunks, written and read by the exchange's serializer, and its reduce
 * side), on rows of a numeric key and of a string key. The first query's tasks otherwise take
 * their rows in through code the JIT is still compiling while every core runs a task (the H200
 * host's profile of a first run: the intake's own methods compiled 0.1-0.5 s each, inside it).
 * The partition's sort of batches also runs once more on the same rows as a cache holds them
 * (built by Spark's own column builders, compressed as its cache compresses them) and decoded as
 * a task's read of the cache decodes them ({@link CachedBatchColumns}), since a first query from
 * the cache otherwise compiles Spark's decoders while every core runs a task (1.45 s of compiler
 * time inside the H200 host's first run of a sort of 1e8 cached rows). And once more read back
 * from a Parquet file of them by Spark's vectorized reader ({@link WarmupParquetFile}), whose
 * first use a first query over Parquet files otherwise pays inside its tasks.
 *
 * <p>The sorts are the tasks' own code, with the session's settings, in memory counted apart from
 * Spark's (a task memory manager of its own): they take no execution memory from the tasks, are
 * not counted among the process's sorts, and hold a GPU-task slot only while they sort. It stops
 * before its next sort once a task sorts: from then on the tasks compile that code themselves,
 * and the warm-up would only take cores and the device from them. Each output is checked to be in
 * order, so a wrong row path says so in the log before a task runs it.
 */
final class RowPathWarmup {
  private static final Logger LOG = LoggerFactory.getLogger(RowPathWarmup.class);
  /** The warm-up's name in logs and threads. */
  static final String NAME = "row-path";
  /** Rows of each partition sorted: past the intake's small cases, some milliseconds each. */
  static final int ROWS = 1 << 18;
  /** Rows of each columnar batch (a Parquet reader's default). */
  private static final int BATCH_ROWS = 4096;
  /** Rows of each cached batch ({@code spark.sql.inMemoryColumnarStorage.batchSize}'s default). */
  static final int CACHE_BATCH_ROWS = 10_000;
  /**
   * Rounds of every shape. 6 rounds of 2^19 rows took 5.6 s on the H200 host alone and were still
   * running at the first query of every benchmark JVM (caching beside them): 4 of 2^18, a third.
   */
  static final int ROUNDS = 4;
  /** Map and reduce partitions of the global sort. */
  private static final int MAP_PARTITIONS = 2;
  private static final int REDUCE_PARTITIONS = 4;
  /**
   * The staging ring of the even rounds ({@code spark.gpusort.gather.stagingBytes}): stretches of
   * 4 KiB rather than the tasks' 512 KiB, so that the upload's per-stretch methods run often
   * enough to be compiled by the optimizing JIT here (on the H200 host they were otherwise
   * compiled during the first query, 0.1-0.5 s each while every core ran a task); the odd rounds
   * sort with the session's own ring.
   */
  static final long SMALL_STAGING_BYTES = 16L << 10;
  private static final ClassTag<Object> OBJECT = ClassTag$.MODULE$.Any();

  private final SortEngine engine;
  private final int rows;
  /** Memory of its own, its bound the sorts' need with room to spare: none from Spark's tasks. */
  private final UnifiedMemoryManager memory;
  private final SplittableRandom random = new SplittableRandom(7);
  /** Whether a Parquet file could not be written or read: that step is left out then. */
  private boolean parquetUnavailable;
  /** Sorters made so far; each one's task attempt number in {@link #memory}. */
  private int sorts;

  private RowPathWarmup(SortEngine engine, int rows) {
    this.engine = engine;
    this.rows = rows;
    long bound = Math.max(1L << 30, 64L * rows * MAP_PARTITIONS);
    this.memory = new UnifiedMemoryManager(new SparkConf(false), bound, bound / 2, 1);
  }

  /**
   * Starts the warm-up on {@code engine} with {@code conf} in the background, after the engine's
   * own, once per engine; nothing where the engine does not warm up (the CPU engine).
   */
  static void start(SortEngine engine, GpuSortConf conf) {
    Engines.warmUpAfter(engine, NAME,
        e -> run(e, conf, ROUNDS, ROWS, () -> ExternalRowSorter.openSorts() > 0));
  }

  /**
   * Runs {@code rounds} rounds of every shape, {@code rows} rows a partition, on {@code engine};
   * stops before a step once {@code tasksSorting}. Returns the sorts run.
   */
  static int run(SortEngine engine, GpuSortConf conf, int rounds, int rows,
      BooleanSupplier tasksSorting) {
    RowPathWarmup warmup = new RowPathWarmup(engine, rows);
    GpuSortConf small = conf.get(GpuSortConf.STAGING_BYTES) > 0
        ? conf.with(GpuSortConf.STAGING_BYTES, Long.toString(SMALL_STAGING_BYTES)) : conf;
    for (int round = 0; round < rounds; round++) {
      // Staging rings and nullable columns alternate, so that the compiled intake has seen both
      // kinds (a schema's nullability picks branches in the key's encoding: compiled for one, the
      // JIT recompiles it inside the first query that brings the other).
      GpuSortConf staging = round % 2 == 0 ? small : conf;
      boolean nullable = round / 2 % 2 == 0;
      for (Shape shape : List.of(Shape.longKey(staging, rows, nullable),
          Shape.stringKey(staging, rows, nullable))) {
        List<ColumnarBatch> batches = shape.batches(warmup.random, rows);
        List<Runnable> steps = List.of(() -> warmup.sortBatches(shape, batches),
            () -> warmup.sortCached(shape, batches), () -> warmup.sortParquet(shape, batches),
            () -> warmup.sortRows(shape, batches), () -> warmup.sortGlobally(shape));
        for (Runnable step : steps) {
          if (tasksSorting.getAsBoolean()) {
            return warmup.sorts;
          }
          step.run();
        }
      }
    }
    return warmup.sorts;
  }

  /** A partition's sort of columnar {@code batches}. */
  private void sortBatches(Shape shape, List<ColumnarBatch> batches) {
    try (ExternalRowSorter sorter = sorter(shape)) {
      check(shape, rows, sorter.sortBatches(batches.iterator(),
          ColumnarRowWriter.of(shape.schema)));
    }
  }

  /** A partition's sort of the rows of {@code batches} read back from a cache of them. */
  private void sortCached(Shape shape, List<ColumnarBatch> batches) {
    List<CachedBatch> cached = cached(shape.schema, batches);
    try (ExternalRowSorter sorter = sorter(shape)) {
      check(shape, rows, sorter.sortBatches(
          CachedBatchColumns.decoded(cached.iterator(), shape.types()),
          ColumnarRowWriter.of(shape.schema)));
    }
  }

  /**
   * A partition's sort of the rows of {@code batches} read back from a Parquet file of them by
   * Spark's vectorized reader; where no such file can be written (no writable temporary
   * directory), says so once and leaves this step out from then on.
   */
  private void sortParquet(Shape shape, List<ColumnarBatch> batches) {
    if (parquetUnavailable) {
      return;
    }
    try (WarmupParquetFile file = WarmupParquetFile.write(shape.schema, batches);
        ExternalRowSorter sorter = sorter(shape)) {
      check(shape, rows, sorter.sortBatches(file.batches(), ColumnarRowWriter.of(shape.schema)));
    } catch (IOException | UncheckedIOException e) {
      parquetUnavailable = true;
      LOG.warn("The row path's warm-up leaves out reading Parquet: {}", e.toString());
    }
  }

  /** A partition's sort of the rows of {@code batches}. */
  private void sortRows(Shape shape, List<ColumnarBatch> batches) {
    try (ExternalRowSorter sorter = sorter(shape)) {
      check(shape, rows, sorter.sort(shape.rows(batches)));
    }
  }

  /**
   * The global sort's two sides: map partitions sorted and cut at bounds sampled from their rows,
   * each reduce partition's chunks written and read back by the exchange's serializer, then
   * sorted (or merged on the device) as the reduce side does.
   */
  private void sortGlobally(Shape shape) {
    int perMap = rows / MAP_PARTITIONS;
    List<List<ColumnarBatch>> maps = new ArrayList<>();
    List<RangeBounds.PartitionSample> samples = new ArrayList<>();
    RowKeys keys = new RowKeys(shape.plan);
    for (int m = 0; m < MAP_PARTITIONS; m++) {
      List<ColumnarBatch> batches = shape.batches(random, perMap);
      maps.add(batches);
      samples.add(RangeBounds.sample(shape.rows(batches), m, 1000, keys, null));
    }
    RangeBounds bounds = RangeBounds.choose(samples, REDUCE_PARTITIONS,
        shape.plan.keys.layout.needsTieBreak(), keys.ordering);
    RowChunkSerializer serializer = new RowChunkSerializer(shape.plan.packRows);
    ByteArrayOutputStream[] blocks = new ByteArrayOutputStream[bounds.numPartitions()];
    SerializationStream[] writers = new SerializationStream[blocks.length];
    for (int p = 0; p < blocks.length; p++) {
      blocks[p] = new ByteArrayOutputStream();
      writers[p] = serializer.newInstance().serializeStream(blocks[p]);
    }
    for (int m = 0; m < MAP_PARTITIONS; m++) {
      try (ExternalRowSorter sorter = sorter(shape)) {
        Iterator<Tuple2<Integer, RowChunk>> chunks = sorter.sortBatchesIntoChunks(
            maps.get(m).iterator(), ColumnarRowWriter.of(shape.schema), bounds, m);
        while (chunks.hasNext()) {
          Tuple2<Integer, RowChunk> chunk = chunks.next();
          writers[chunk._1()].writeKey(chunk._1(), OBJECT).writeValue(chunk._2(), OBJECT);
        }
      }
    }
    long total = 0;
    for (int p = 0; p < blocks.length; p++) {
      writers[p].close();
      scala.collection.Iterator<Object> read = serializer.newInstance()
          .deserializeStream(new ByteArrayInputStream(blocks[p].toByteArray())).asIterator();
      Iterator<RowChunk> chunks = new Iterator<>() {
        @Override
        public boolean hasNext() {
          return read.hasNext();
        }

        @Override
        public RowChunk next() {
          return (RowChunk) read.next();
        }
      };
      try (ExternalRowSorter sorter = sorter(shape)) {
        total += check(shape, -1, sorter.sortChunksAsReducer(chunks, 0));
      }
    }
    if (total != (long) perMap * MAP_PARTITIONS) {
      throw new IllegalStateException("the row path's warm-up sort of " + shape.name + " keys "
          + "lost rows in its exchange: " + total + " of " + (long) perMap * MAP_PARTITIONS);
    }
  }

  /**
   * The rows of {@code batches} as Spark's cache holds them: batches of {@link
   * #CACHE_BATCH_ROWS}, each column built and compressed by Spark's column builder as {@code
   * DefaultCachedBatchSerializer} builds it.
   */
  static List<CachedBatch> cached(StructType schema, List<ColumnarBatch> batches) {
    List<CachedBatch> cached = new ArrayList<>();
    ColumnBuilder[] builders = null;
    int n = 0;
    for (ColumnarBatch batch : batches) {
      for (int r = 0; r < batch.numRows(); r++) {
        if (builders == null) {
          builders = new ColumnBuilder[schema.size()];
          for (int c = 0; c < builders.length; c++) {
            builders[c] = ColumnBuilder$.MODULE$.apply(schema.fields()[c].dataType(),
                CACHE_BATCH_ROWS, schema.fields()[c].name(), true);
          }
        }
        InternalRow row = batch.getRow(r);
        for (int c = 0; c < builders.length; c++) {
          builders[c].appendFrom(row, c);
        }
        if (++n == CACHE_BATCH_ROWS) {
          cached.add(built(builders, n));
          builders = null;
          n = 0;
        }
      }
    }
    if (n > 0) {
      cached.add(built(builders, n));
    }
    return cached;
  }

  private static CachedBatch built(ColumnBuilder[] builders, int numRows) {
    byte[][] buffers = new byte[builders.length][];
    for (int c = 0; c < builders.length; c++) {
      ByteBuffer built = builders[c].build();
      buffers[c] = new byte[built.remaining()];
      built.get(buffers[c]);
    }
    // The batch's statistics only serve to skip batches by a pushed filter: none here.
    return new DefaultCachedBatch(numRows, buffers, new GenericInternalRow(0));
  }

  /**
   * A sorter outside any task, its memory a task of {@link #memory}'s own, closed (all it holds
   * released) where a task would be ended: at the end of its try block, whether its output was
   * read to the end or a check failed part way.
   */
  private ExternalRowSorter sorter(Shape shape) {
    SortMemory taskMemory = new SortMemory(new TaskMemoryManager(memory, sorts++));
    return ExternalRowSorter.outsideTask(shape.plan, taskMemory, engine, () -> {
      throw new IOException("the row path's warm-up does not spill");
    });
  }

  /**
   * Reads {@code sorted} to its end (which releases the sort), checks its keys are in order and,
   * where {@code rows} is not negative, that it has that many rows; returns the rows read.
   */
  private static long check(Shape shape, int rows, Iterator<InternalRow> sorted) {
    long n = 0;
    Comparable<Object> last = null;
    while (sorted.hasNext()) {
      Comparable<Object> key = shape.key(sorted.next());
      if (last != null && last.compareTo(key) > 0) {
        throw new IllegalStateException("the row path's warm-up sort of " + shape.name
            + " keys put " + last + " before " + key);
      }
      last = key;
      n++;
    }
    if (rows >= 0 && n != rows) {
      throw new IllegalStateException("the row path's warm-up sort of " + shape.name + " keys "
          + "returned " + n + " rows of " + rows);
    }
    return n;
  }

  /**
   * How the warm-up's long columns run, each picked so that Spark's cache builder compresses it
   * with another of the schemes it has for longs (it takes the one that compresses best): random
   * values pass through as they are; a sequence of small steps is stored by its deltas; values in
   * long runs by their runs; a few distinct values scattered at random by a dictionary.
   */
  enum LongValues {
    /** Pass-through. */
    RANDOM,
    /** Delta-encoded: each value a step of 0-15 after the one before. */
    SEQUENCE,
    /** Run-length encoded: runs of {@value #RUN_ROWS} equal values. */
    RUNS,
    /** Dictionary-encoded: {@value #DISTINCT} distinct values, far apart, in random order. */
    FEW;

    /** Distinct values of {@link #FEW} and {@link #RUNS}. */
    static final int DISTINCT = 8;
    /** Rows of each run of {@link #RUNS}. */
    static final int RUN_ROWS = 64;

    /** The value of row {@code row}, after {@code previous}. */
    long next(SplittableRandom random, int row, long previous, long[] dictionary) {
      return switch (this) {
        case RANDOM -> random.nextLong();
        case SEQUENCE -> previous + random.nextInt(16);
        case RUNS -> dictionary[row / RUN_ROWS % dictionary.length];
        case FEW -> dictionary[random.nextInt(dictionary.length)];
      };
    }
  }

  /** Rows of one schema, sorted by their first column ascending. */
  private static final class Shape {
    final String name;
    final StructType schema;
    final SortPlan plan;
    private final UnsafeProjection toUnsafe;
    /** How each long column's values run (the key's: random); a string column's is not read. */
    private final LongValues[] values;

    private Shape(String name, StructType schema, LongValues[] values, GpuSortConf conf,
        int rows) {
      this.name = name;
      this.schema = schema;
      this.values = values;
      List<Attribute> attributes = new ArrayList<>();
      for (StructField f : schema.fields()) {
        attributes.add(new AttributeReference(f.name(), f.dataType(), f.nullable(),
            Metadata.empty(), NamedExpression$.MODULE$.newExprId(),
            ScalaCollections.list(List.<String>of())));
      }
      SortOrder order = new SortOrder(attributes.get(0), Ascending$.MODULE$, NullsFirst$.MODULE$,
          ScalaCollections.list(List.<Expression>of()));
      KeySpec keys = KeySpec.of(List.of(order), ScalaCollections.list(attributes),
          conf.get(GpuSortConf.STRING_PREFIX_BYTES));
      this.plan = new SortPlan(keys, schema, conf, REDUCE_PARTITIONS, 64L << 20,
          SortMetrics.unregistered(), Integer.MAX_VALUE, rows);
      this.toUnsafe = UnsafeProjection.create(schema);
    }

    /** A long key and two long values (one in a sequence, one in runs): the benchmarks' rows. */
    static Shape longKey(GpuSortConf conf, int rows, boolean nullable) {
      return new Shape("long", schema(nullable, DataTypes.LongType, DataTypes.LongType,
          DataTypes.LongType), new LongValues[] {LongValues.RANDOM, LongValues.SEQUENCE,
          LongValues.RUNS}, conf, rows);
    }

    /**
     * A string key of 4-24 bytes (some past the key's prefix) and a long value of a few distinct
     * ones.
     */
    static Shape stringKey(GpuSortConf conf, int rows, boolean nullable) {
      return new Shape("string", schema(nullable, DataTypes.StringType, DataTypes.LongType),
          new LongValues[] {LongValues.RANDOM, LongValues.FEW}, conf, rows);
    }

    /** Columns of {@code types}, all {@code nullable} or none (no value is null). */
    private static StructType schema(boolean nullable, DataType... types) {
      StructField[] fields = new StructField[types.length];
      for (int i = 0; i < types.length; i++) {
        fields[i] = new StructField("c" + i, types[i], nullable, Metadata.empty());
      }
      return new StructType(fields);
    }

    DataType[] types() {
      DataType[] types = new DataType[schema.size()];
      for (int c = 0; c < types.length; c++) {
        types[c] = schema.fields()[c].dataType();
      }
      return types;
    }

    /**
     * {@code rows} rows as columnar batches: a random key, and values shaped so that Spark's
     * cache stores each long column of the shapes with another of its encodings ({@link
     * LongValues}), as users' columns are (ids in sequence, codes in runs, a few distinct values):
     * the first query from a cache otherwise compiles the decoders of the encodings the warm-up
     * did not bring while every core runs a task.
     */
    List<ColumnarBatch> batches(SplittableRandom random, int rows) {
      long[] dictionary = random.longs(LongValues.DISTINCT).toArray();
      long[] previous = new long[schema.size()];
      List<ColumnarBatch> batches = new ArrayList<>();
      for (int from = 0; from < rows; from += BATCH_ROWS) {
        int n = Math.min(BATCH_ROWS, rows - from);
        ColumnVector[] columns = new ColumnVector[schema.size()];
        for (int c = 0; c < columns.length; c++) {
          DataType type = schema.fields()[c].dataType();
          OnHeapColumnVector column = new OnHeapColumnVector(n, type);
          for (int r = 0; r < n; r++) {
            if (type == DataTypes.StringType) {
              column.putByteArray(r, randomString(random));
            } else {
              previous[c] = values[c].next(random, from + r, previous[c], dictionary);
              column.putLong(r, previous[c]);
            }
          }
          columns[c] = column;
        }
        batches.add(new ColumnarBatch(columns, n));
      }
      return batches;
    }

    private static byte[] randomString(SplittableRandom random) {
      byte[] bytes = new byte[4 + random.nextInt(21)];
      for (int i = 0; i < bytes.length; i++) {
        bytes[i] = (byte) ('a' + random.nextInt(26));
      }
      return bytes;
    }

    /** The rows of {@code batches}, one at a time, as unsafe rows. */
    Iterator<InternalRow> rows(List<ColumnarBatch> batches) {
      Iterator<ColumnarBatch> each = batches.iterator();
      return new Iterator<>() {
        private ColumnarBatch batch;
        private int next;

        @Override
        public boolean hasNext() {
          while ((batch == null || next == batch.numRows()) && each.hasNext()) {
            batch = each.next();
            next = 0;
          }
          return batch != null && next < batch.numRows();
        }

        @Override
        public InternalRow next() {
          int r = next++;
          Object[] values = new Object[schema.size()];
          for (int c = 0; c < values.length; c++) {
            ColumnVector column = batch.column(c);
            values[c] = column.dataType() == DataTypes.StringType ? column.getUTF8String(r).clone()
                : (Object) column.getLong(r);
          }
          return toUnsafe.apply(new GenericInternalRow(values));
        }
      };
    }

    /** The sort key of {@code row}. */
    @SuppressWarnings("unchecked")
    Comparable<Object> key(InternalRow row) {
      Object key = schema.fields()[0].dataType() == DataTypes.StringType
          ? row.getUTF8String(0).clone() : (Object) row.getLong(0);
      return (Comparable<Object>) key;
    }
  }
}
