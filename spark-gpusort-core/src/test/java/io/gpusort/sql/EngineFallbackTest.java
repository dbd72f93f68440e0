package io.gpusort.sql;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.gpusort.compat.ScalaCollections;
import io.gpusort.config.GpuSortConf;
import io.gpusort.engine.EngineException;
import io.gpusort.engine.Engines;
import io.gpusort.engine.KeyBatch;
import io.gpusort.engine.SortEngine;
import io.gpusort.memory.HostBuffer;
import io.gpusort.memory.HostMemory;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.spark.TaskKilledException;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.Test;

/**
 * A GPU engine that fails (device error, out of device memory) costs a run nothing but time: it is
 * sorted on the CPU engine instead, with the same order. A killed task is not: it starts no engine
 * call, and a call that failed while the task was being killed is not retried.
 */
class EngineFallbackTest {
  private static final int ROWS = 5000;

  /** Fails every call, as a CUDA engine does after a device error; may kill the task first. */
  private static final class FailingEngine implements SortEngine {
    final AtomicInteger calls = new AtomicInteger();
    final AtomicBoolean killOnCall;

    FailingEngine(AtomicBoolean killOnCall) {
      this.killOnCall = killOnCall;
    }

    @Override
    public String name() {
      return "failing";
    }

    @Override
    public void sort(KeyBatch keys, HostBuffer permutation) {
      calls.incrementAndGet();
      if (killOnCall != null) {
        killOnCall.set(true);
      }
      throw new EngineException("simulated device failure");
    }
  }

  @Test
  void failedEngineFallsBackToTheCpuWithTheSameOrder() {
    FailingEngine failing = new FailingEngine(null);
    int[] fallen = sortedOrder(new EngineStage(plan(), options -> failing, () -> { }));
    int[] reference = sortedOrder(new EngineStage(plan(), options -> Engines.cpu(), () -> { }));
    assertArrayEquals(reference, fallen);
    assertEquals(1, failing.calls.get(), "one failed engine call, then the CPU engine");
  }

  @Test
  void killedTaskStartsNoEngineCall() {
    FailingEngine failing = new FailingEngine(null);
    EngineStage stage = new EngineStage(plan(), options -> failing, () -> {
      throw new TaskKilledException("cancelled");
    });
    assertThrows(TaskKilledException.class, () -> sortedOrder(stage));
    assertEquals(0, failing.calls.get());
  }

  @Test
  void engineFailingBecauseOfAKillIsNotRetriedOnTheCpu() {
    AtomicBoolean killed = new AtomicBoolean();
    FailingEngine failing = new FailingEngine(killed);
    AtomicInteger checks = new AtomicInteger();
    EngineStage stage = new EngineStage(plan(), options -> failing, () -> {
      checks.incrementAndGet();
      if (killed.get()) {
        throw new TaskKilledException("cancelled");
      }
    });
    long rowsBefore = io.gpusort.engine.EngineStats.rows();
    assertThrows(TaskKilledException.class, () -> sortedOrder(stage));
    assertEquals(1, failing.calls.get());
    assertEquals(2, checks.get(), "checked before the call and before the fallback");
    assertEquals(rowsBefore, io.gpusort.engine.EngineStats.rows(), "no engine sorted any row");
  }

  private static SortPlan plan() {
    AttributeReference key = RowKeyEncoderTest.attribute("k", DataTypes.LongType, true);
    StructType schema = new StructType(new StructField[] {
        new StructField("k", DataTypes.LongType, true, Metadata.empty())});
    KeySpec spec = KeySpec.of(List.of(RowKeyEncoderTest.sortOrder(key, false, true)),
        ScalaCollections.list(List.<Attribute>of(key)), 16);
    return new SortPlan(spec, schema, GpuSortConf.of(Map.of()), 4, 64L << 20);
  }

  private static int[] sortedOrder(EngineStage stage) {
    SplittableRandom random = new SplittableRandom(7);
    try (HostBuffer words = HostBuffer.allocate(8L * ROWS);
        HostBuffer permutation = HostBuffer.allocate(4L * ROWS)) {
      KeyBatch keys = new KeyBatch(words, ROWS, 1, 64);
      for (int i = 0; i < ROWS; i++) {
        keys.setWord(i, 0, random.nextLong(100));
      }
      stage.sort(keys, permutation);
      int[] order = new int[ROWS];
      HostMemory.copyToArray(permutation.address(), order, 0, ROWS);
      return order;
    }
  }
}
