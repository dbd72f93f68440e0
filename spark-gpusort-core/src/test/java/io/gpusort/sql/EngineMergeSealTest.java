package io.gpusort.sql;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpusort.compat.ScalaCollections;
import io.gpusort.config.GpuSortConf;
import io.gpusort.engine.KeyBatch;
import io.gpusort.engine.SortEngine;
import io.gpusort.engine.cpu.CpuRadixEngine;
import io.gpusort.memory.HostBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The seal of a reducer's run ({@link RunBuilder.Input#SORTED_RUNS_ENGINE_MERGE}): the keys'
 * non-decreasing stretches go to {@link SortEngine#sortRuns} as runs, at most
 * {@link RunBuilder#MAX_ENGINE_RUNS} of them (more: sorted); a partition's rows
 * ({@link RunBuilder.Input#UNSORTED}, the map side) are sorted. The rows come out in order.
 */
class EngineMergeSealTest {
  @RegisterExtension
  final TaskMemory memory = new TaskMemory();

  @Test
  void sortedBlocksGoToTheEngineAsRuns() {
    // Blocks of 3000, 0, 5000 and 2000 rows, each sorted; keys below and above zero, compared
    // as the encoder orders them (signed longs, ascending).
    RecordingEngine engine = new RecordingEngine();
    long[] keys = sealAndCheck(engine, RunBuilder.Input.SORTED_RUNS_ENGINE_MERGE,
        new int[] {3000, 0, 5000, 2000});
    assertEquals(1, engine.runCalls.size(), "one sortRuns call");
    assertEquals(0, engine.sortCalls);
    int[] starts = engine.runCalls.get(0);
    assertEquals(0, starts[0]);
    // Every run found is a block (a block joining the next in order is one run with it).
    for (int s : starts) {
      assertTrue(s == 0 || s == 3000 || s == 8000, "run start " + s + " inside a block");
    }
    assertTrue(starts.length >= 2, "blocks of random keys found as one run");
    assertEquals(10_000, keys.length);
  }

  @Test
  void tooManyRunsAreSorted() {
    RecordingEngine engine = new RecordingEngine();
    int[] blocks = new int[RunBuilder.MAX_ENGINE_RUNS * 3];
    Arrays.fill(blocks, 2);
    sealAndCheck(engine, RunBuilder.Input.SORTED_RUNS_ENGINE_MERGE, blocks);
    assertEquals(0, engine.runCalls.size());
    assertEquals(1, engine.sortCalls);
  }

  @Test
  void theMapSideSorts() {
    RecordingEngine engine = new RecordingEngine();
    sealAndCheck(engine, RunBuilder.Input.UNSORTED, new int[] {4000, 4000});
    assertEquals(0, engine.runCalls.size());
    assertEquals(1, engine.sortCalls);
  }

  /** Fills a run with sorted blocks of random keys, seals it, checks the rows come out sorted. */
  private long[] sealAndCheck(RecordingEngine engine, RunBuilder.Input input, int[] blocks) {
    SortPlan plan = plan();
    EngineStage stage = new EngineStage(plan, options -> engine, () -> { });
    RunBuilder builder = new RunBuilder(new RowKeys(plan), memory.get(), 4096, false, 2,
        stage::openRowUpload);
    SplittableRandom random = new SplittableRandom(7);
    int n = Arrays.stream(blocks).sum();
    long[] keys = new long[n];
    UnsafeRow row = new UnsafeRow(2);
    byte[] bytes = new byte[24];
    row.pointTo(bytes, bytes.length);
    int at = 0;
    for (int size : blocks) {
      long[] block = random.longs(size).sorted().toArray();
      for (long k : block) {
        keys[at++] = k;
        row.setLong(0, k);
        row.setLong(1, ~k);
        assertTrue(builder.tryMakeRoom(row.getSizeInBytes()));
        builder.append(row);
      }
    }
    SortedRun run = builder.seal(stage, input, SortMetrics.NONE, () -> { });
    List<Long> read = new ArrayList<>();
    try (MemoryRunCursor cursor = new MemoryRunCursor(run, memory.get(), 2, 1, false)) {
      while (cursor.advance()) {
        assertEquals(~cursor.row().getLong(0), cursor.row().getLong(1), "row torn");
        read.add(cursor.row().getLong(0));
      }
    }
    run.close();
    builder.close();
    long[] sorted = keys.clone();
    Arrays.sort(sorted);
    assertArrayEquals(sorted, read.stream().mapToLong(Long::longValue).toArray(),
        "rows out of order");
    return keys;
  }

  private static SortPlan plan() {
    AttributeReference key = RowKeyEncoderTest.attribute("k", DataTypes.LongType, false);
    StructType schema = new StructType(new StructField[] {
        new StructField("k", DataTypes.LongType, false, Metadata.empty()),
        new StructField("v", DataTypes.LongType, false, Metadata.empty())});
    KeySpec spec = KeySpec.of(List.of(RowKeyEncoderTest.sortOrder(key, false, true)),
        ScalaCollections.list(List.<Attribute>of(key)), 16);
    return new SortPlan(spec, schema, GpuSortConf.of(Map.of()), 4, 64L << 20);
  }

  /** The CPU engine, under another name, recording which of its two sorts each call took. */
  private static final class RecordingEngine implements SortEngine {
    private final SortEngine cpu = new CpuRadixEngine(1);
    final List<int[]> runCalls = new ArrayList<>();
    int sortCalls;

    @Override
    public String name() {
      return "recording";
    }

    @Override
    public void sort(KeyBatch keys, HostBuffer permutation) {
      sortCalls++;
      cpu.sort(keys, permutation);
    }

    @Override
    public void sortRuns(KeyBatch keys, int[] runStarts, HostBuffer permutation) {
      assertEquals(1, (keys.keyBits() + 63) / 64, "runs of keys wider than one word");
      runCalls.add(runStarts.clone());
      SortEngine.super.sortRuns(keys, runStarts, permutation);
      sortCalls--;  // the default's sort is this call's, not one of its own
    }
  }
}
