package io.gpusort.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gpusort.config.GpuSortConf;
import io.gpusort.engine.EngineOptions;
import io.gpusort.engine.EngineStats;
import io.gpusort.engine.Engines;
import io.gpusort.engine.KeyBatch;
import io.gpusort.engine.SortEngine;
import io.gpusort.engine.cuda.CudaEngine;
import io.gpusort.memory.HostBuffer;
import io.gpusort.memory.HostMemory;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.spark.sql.columnar.CachedBatch;
import org.apache.spark.sql.execution.columnar.DefaultCachedBatch;
import org.apache.spark.sql.execution.columnar.compression.DictionaryEncoding$;
import org.apache.spark.sql.execution.columnar.compression.LongDelta$;
import org.apache.spark.sql.execution.columnar.compression.PassThrough$;
import org.apache.spark.sql.execution.columnar.compression.RunLengthEncoding$;
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The row path's warm-up ({@link RowPathWarmup}) run in the foreground: every shape and side of
 * it completes on an engine that sorts right, gives back all it took and counts nowhere in the
 * process's figures; an engine that sorts wrong is caught by its checks; and it runs only after
 * an engine that warms up (a GPU engine's), never on the CPU engine. On a CUDA device, every side
 * sorts there, its outputs in order, and gives back its host memory.
 */
class RowPathWarmupTest {
  private static final GpuSortConf CONF = GpuSortConf.of(Map.of());

  @Test
  void everySideCompletesAndGivesBackWhatItTook() {
    long hostBefore = HostMemory.bytesInUse();
    long rowsBefore = ExternalRowSorter.rowsTakenIn();
    long columnarBefore = ExternalRowSorter.columnarRowsTakenIn();
    int openBefore = ExternalRowSorter.openSorts();
    int sorts = RowPathWarmup.run(Engines.cpu(), CONF, 2, 20_000, () -> false);
    // Per round and shape: four whole-partition sorts (batches, the cache's batches, a Parquet
    // file's, rows), two map sides and a reduce side for each partition the bounds cut.
    assertTrue(sorts >= 2 * 2 * 7, "sorts run: " + sorts);
    assertEquals(openBefore, ExternalRowSorter.openSorts(), "a warm-up sorter left open");
    assertEquals(hostBefore, HostMemory.bytesInUse(), "native host memory not given back");
    assertEquals(rowsBefore, ExternalRowSorter.rowsTakenIn(),
        "the warm-up's rows counted among the process's");
    assertEquals(columnarBefore, ExternalRowSorter.columnarRowsTakenIn(),
        "the warm-up's batches counted among the process's");
  }

  @Test
  void theCachedStepDecodesWhatSparksColumnBuildersHold() {
    // A long column and a string column of few distinct values (which Spark's builder stores by
    // dictionary), with nulls, over three cached batches, the last a short one.
    KnownBatches known = new KnownBatches(7, 11, i -> "v" + i % 5);
    int n = 2 * RowPathWarmup.CACHE_BATCH_ROWS + 123;
    List<ColumnarBatch> batches = known.batches(n, 4096);
    long tasksBatchesBefore = CachedBatchColumns.batchesRead();
    long dictionaryBefore = CachedBytesVector.columnsDecoded(2);
    List<CachedBatch> cached = RowPathWarmup.cached(KnownBatches.SCHEMA, batches);
    assertEquals(3, cached.size());
    known.assertReadBack(CachedBatchColumns.decoded(cached.iterator(),
        new DataType[] {DataTypes.LongType, DataTypes.StringType}), n);
    assertTrue(CachedBytesVector.columnsDecoded(2) > dictionaryBefore,
        "the string column was not compressed by dictionary as Spark's cache compresses it");
    assertEquals(tasksBatchesBefore, CachedBatchColumns.batchesRead(),
        "the warm-up's batches counted among the tasks'");
  }

  @Test
  void theWarmupsLongColumnsBringEachOfTheCachesEncodings() {
    // One column of each kind of values, cached as a task's cache holds them: Spark's builder
    // picks the scheme that compresses each best, and each kind must bring another one.
    RowPathWarmup.LongValues[] kinds = RowPathWarmup.LongValues.values();
    StructField[] fields = new StructField[kinds.length];
    for (int c = 0; c < kinds.length; c++) {
      fields[c] = new StructField("c" + c, DataTypes.LongType, false, Metadata.empty());
    }
    int n = RowPathWarmup.CACHE_BATCH_ROWS;
    SplittableRandom random = new SplittableRandom(3);
    long[] dictionary = random.longs(RowPathWarmup.LongValues.DISTINCT).toArray();
    ColumnVector[] columns = new ColumnVector[kinds.length];
    for (int c = 0; c < kinds.length; c++) {
      OnHeapColumnVector column = new OnHeapColumnVector(n, DataTypes.LongType);
      long previous = 0;
      for (int r = 0; r < n; r++) {
        previous = kinds[c].next(random, r, previous, dictionary);
        column.putLong(r, previous);
      }
      columns[c] = column;
    }
    List<CachedBatch> cached = RowPathWarmup.cached(new StructType(fields),
        List.of(new ColumnarBatch(columns, n)));
    assertEquals(1, cached.size());
    byte[][] buffers = ((DefaultCachedBatch) cached.get(0)).buffers();
    Map<RowPathWarmup.LongValues, Integer> expected = Map.of(
        RowPathWarmup.LongValues.RANDOM, PassThrough$.MODULE$.typeId(),
        RowPathWarmup.LongValues.SEQUENCE, LongDelta$.MODULE$.typeId(),
        RowPathWarmup.LongValues.RUNS, RunLengthEncoding$.MODULE$.typeId(),
        RowPathWarmup.LongValues.FEW, DictionaryEncoding$.MODULE$.typeId());
    for (int c = 0; c < kinds.length; c++) {
      ByteBuffer header = ByteBuffer.wrap(buffers[c]).order(ByteOrder.nativeOrder());
      int nulls = header.getInt();
      header.position(header.position() + 4 * nulls);
      assertEquals(expected.get(kinds[c]), header.getInt(), kinds[c] + "'s scheme");
    }
  }

  @Test
  void anEngineThatSortsWrongIsCaught() {
    // Sorts right, then swaps the first two rows of each batch of more than one row.
    SortEngine wrong = new SortEngine() {
      @Override
      public String name() {
        return "wrong";
      }

      @Override
      public void sort(KeyBatch keys, HostBuffer permutation) {
        Engines.cpu().sort(keys, permutation);
        if (keys.numRows() > 1) {
          int first = permutation.getInt(0);
          permutation.putInt(0, permutation.getInt(4));
          permutation.putInt(4, first);
        }
      }
    };
    long hostBefore = HostMemory.bytesInUse();
    IllegalStateException e = assertThrows(IllegalStateException.class,
        () -> RowPathWarmup.run(wrong, CONF, 1, 20_000, () -> false));
    assertTrue(e.getMessage().contains("warm-up sort"), e.getMessage());
    assertEquals(hostBefore, HostMemory.bytesInUse(), "a failed warm-up kept native memory");
  }

  @Test
  void stopsOnceATaskSorts() {
    // Tasks sort from the start: nothing runs. A task begins after the first check: only the
    // first whole partition's sort runs.
    assertEquals(0, RowPathWarmup.run(Engines.cpu(), CONF, 2, 20_000, () -> true));
    AtomicInteger checks = new AtomicInteger();
    assertEquals(1, RowPathWarmup.run(Engines.cpu(), CONF, 2, 20_000,
        () -> checks.incrementAndGet() > 1));
  }

  @Test
  void runsOnlyAfterAnEngineThatWarmsUp() throws InterruptedException {
    AtomicBoolean ran = new AtomicBoolean();
    Engines.warmUpAfter(Engines.cpu(), "test-step", engine -> ran.set(true));
    Engines.awaitWarmups();
    assertFalse(ran.get(), "a step ran after the CPU engine, which does not warm up");
  }

  @Test
  @Tag("gpu")
  void onCudaEverySideSortsOnTheDeviceInOrder() {
    assumeTrue(CudaEngine.available(), "no CUDA device: " + CudaEngine.unavailableReason());
    SortEngine cuda = Engines.create(EngineOptions.of(GpuSortConf.of(
        Map.of("spark.gpusort.engine", "cuda"))));
    Engines.awaitWarmups();
    long hostBefore = HostMemory.bytesInUse();
    long gpuRowsBefore = EngineStats.gpuRows();
    long start = System.nanoTime();
    RowPathWarmup.run(cuda, CONF, RowPathWarmup.ROUNDS, RowPathWarmup.ROWS, () -> false);
    long millis = (System.nanoTime() - start) / 1_000_000;
    // Per round and shape at least the two sorts of a whole partition (the exchange's sides add
    // as many again where the reduce side sorts rather than merges on the device).
    long sorted = EngineStats.gpuRows() - gpuRowsBefore;
    assertTrue(sorted >= 2L * RowPathWarmup.ROUNDS * 2 * RowPathWarmup.ROWS,
        "rows sorted on the device: " + sorted);
    assertEquals(hostBefore, HostMemory.bytesInUse(), "native host memory not given back");
    System.out.println("RowPathWarmupTest: the full warm-up on cuda took " + millis + " ms, "
        + sorted + " rows sorted on the device");
  }
}
