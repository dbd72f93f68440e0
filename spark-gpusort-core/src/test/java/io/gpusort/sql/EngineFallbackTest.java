package io.gpusort.sql;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.gpusort.config.GpuSortConf;
import io.gpusort.engine.EngineException;
import io.gpusort.engine.Engines;
import io.gpusort.engine.KeyBatch;
import io.gpusort.engine.SortEngine;
import io.gpusort.memory.HostBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.Test;
import scala.jdk.javaapi.CollectionConverters;

/**
 * A GPU engine that fails (device error, out of device memory) costs the partition nothing but
 * time: it is sorted on the CPU engine instead, with the same order, in one chunk or many.
 */
class EngineFallbackTest {
  /** Fails every call, as a CUDA engine does after a device error. */
  private static final class FailingEngine implements SortEngine {
    final AtomicInteger calls = new AtomicInteger();

    @Override
    public String name() {
      return "failing";
    }

    @Override
    public void sort(KeyBatch keys, HostBuffer permutation) {
      calls.incrementAndGet();
      throw new EngineException("simulated device failure");
    }
  }

  @Test
  void failedEngineFallsBackToTheCpuWithTheSameOrder() {
    for (String chunkBytes : new String[] {"256m", "4k"}) {
      FailingEngine failing = new FailingEngine();
      int[] fallen = sortedOrder(chunkBytes, options -> failing);
      int[] reference = sortedOrder(chunkBytes, options -> Engines.cpu());
      assertArrayEquals(reference, fallen, "chunk.maxBytes=" + chunkBytes);
      assertEquals(1, failing.calls.get(), "one failed engine call, then the CPU engine");
    }
  }

  private static int[] sortedOrder(String chunkBytes,
      java.util.function.Function<io.gpusort.engine.EngineOptions, SortEngine> engines) {
    AttributeReference key = RowKeyEncoderTest.attribute("k", DataTypes.LongType, true);
    AttributeReference payload = RowKeyEncoderTest.attribute("v", DataTypes.IntegerType, false);
    StructType schema = new StructType(new StructField[] {
        new StructField("k", DataTypes.LongType, true, Metadata.empty()),
        new StructField("v", DataTypes.IntegerType, false, Metadata.empty())});
    KeySpec spec = KeySpec.of(List.of(RowKeyEncoderTest.sortOrder(key, false, true)),
        CollectionConverters.asScala(List.<Attribute>of(key, payload)).toList(), 16);
    SortPlan plan = new SortPlan(spec, schema,
        GpuSortConf.of(Map.of(GpuSortConf.CHUNK_BYTES.key(), chunkBytes)), 4, 64L << 20);
    PartitionSorter sorter = new PartitionSorter(plan, engines);
    UnsafeProjection toUnsafe = UnsafeProjection.create(schema);
    SplittableRandom random = new SplittableRandom(7);
    List<InternalRow> rows = new ArrayList<>();
    for (int i = 0; i < 5000; i++) {
      Object k = random.nextInt(10) == 0 ? null : (Object) random.nextLong(100);
      rows.add(toUnsafe.apply(new GenericInternalRow(new Object[] {k, i})).copy());
    }
    return sorter.sortedOrder(sorter.buffer(rows.iterator()));
  }
}
