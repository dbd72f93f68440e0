package io.gpusort.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpusort.compat.ScalaCollections;
import io.gpusort.config.GpuSortConf;
import io.gpusort.engine.RowArrival;
import io.gpusort.engine.RowPages;
import io.gpusort.engine.RowUpload;
import io.gpusort.engine.SortEngine;
import io.gpusort.memory.HostBuffer;
import io.gpusort.memory.HostMemory;
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
 * The row path's side of the transfers overlapped with the task, against an engine that has a
 * "device" in host memory: every full page goes to the upload as the run fills, in order and
 * complete, before the gather; the upload is closed once the run is sealed; the sorted stream is
 * read only where the arrival said it was back; the arrival is closed before the pages are freed;
 * and a gather the engine declines leaves a run read through its permutation.
 */
class RunBuilderStreamingTest {
  private static final int ROWS = 20_000;
  private static final long PAGE_BYTES = 4096;

  @RegisterExtension
  final TaskMemory memory = new TaskMemory();

  @Test
  void pagesGoAheadAndTheStreamIsReadAsItArrives() {
    HostDeviceEngine engine = new HostDeviceEngine(false);
    SortPlan plan = plan();
    RunBuilder builder = builder(plan, engine);
    long[] keys = fill(builder);
    SortedRun run = builder.seal(stage(plan, engine), false, SortMetrics.NONE, () -> { });
    FakeUpload upload = engine.uploads.get(0);
    assertEquals(1, engine.uploads.size(), "one upload for the run");
    assertTrue(upload.closed, "the upload is still open after the seal");
    assertTrue(upload.pages.size() > 5, "too few pages sent ahead: " + upload.pages.size());
    assertEquals(engine.pagesAtGather - 1, upload.pagesAtGather, "pages sent before the gather");
    assertTrue(run.ordered, "the run is not read front to back");
    LazyArrival arrival = engine.arrival;
    assertFalse(arrival.closed);
    List<Long> read = readKeys(run);
    assertTrue(arrival.polls > 0, "the reader never offered the arrival its device memory back");
    Arrays.sort(keys);
    assertEquals(Arrays.stream(keys).boxed().toList(), read, "rows out of order");
    run.close();
    assertTrue(arrival.closed, "the arrival is still open after the run was freed");
    builder.close();
  }

  @Test
  void aDeclinedGatherLeavesTheRunReadThroughItsPermutation() {
    HostDeviceEngine engine = new HostDeviceEngine(true);
    SortPlan plan = plan();
    RunBuilder builder = builder(plan, engine);
    long[] keys = fill(builder);
    SortedRun run = builder.seal(stage(plan, engine), false, SortMetrics.NONE, () -> { });
    assertTrue(engine.uploads.get(0).closed, "the upload is still open after the seal");
    assertFalse(run.ordered);
    List<Long> read = readKeys(run);
    Arrays.sort(keys);
    assertEquals(Arrays.stream(keys).boxed().toList(), read, "rows out of order");
    run.close();
    builder.close();
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

  private static EngineStage stage(SortPlan plan, SortEngine engine) {
    return new EngineStage(plan, options -> engine, () -> { });
  }

  private RunBuilder builder(SortPlan plan, SortEngine engine) {
    EngineStage stage = stage(plan, engine);
    return new RunBuilder(new RowKeys(plan), memory.get(), PAGE_BYTES, false, 2, stage::openRowUpload);
  }

  /** Rows (k, v) of random keys, v = k's complement; returns the keys. */
  private static long[] fill(RunBuilder builder) {
    SplittableRandom random = new SplittableRandom(42);
    long[] keys = new long[ROWS];
    UnsafeRow row = new UnsafeRow(2);
    byte[] bytes = new byte[24];
    row.pointTo(bytes, bytes.length);
    for (int i = 0; i < ROWS; i++) {
      keys[i] = random.nextLong();
      row.setLong(0, keys[i]);
      row.setLong(1, ~keys[i]);
      assertTrue(builder.tryMakeRoom(row.getSizeInBytes()));
      builder.append(row);
    }
    return keys;
  }

  /** The run's keys in output order, each row's payload checked against its key. */
  private List<Long> readKeys(SortedRun run) {
    List<Long> keys = new ArrayList<>();
    try (MemoryRunCursor cursor = new MemoryRunCursor(run, memory.get(), 2, 1, false)) {
      while (cursor.advance()) {
        UnsafeRow row = cursor.row();
        assertEquals(~row.getLong(0), row.getLong(1), "row " + keys.size() + " torn");
        keys.add(row.getLong(0));
      }
    }
    return keys;
  }

  /** Sorts on the CPU engine; "uploads" and "gathers" in host memory, the stream lazily. */
  private static final class HostDeviceEngine extends CpuBackedDeviceEngine {
    final boolean decline;
    final List<FakeUpload> uploads = new ArrayList<>();
    int pagesAtGather;
    LazyArrival arrival;

    HostDeviceEngine(boolean decline) {
      this.decline = decline;
    }

    @Override
    public RowUpload openRowUpload() {
      FakeUpload upload = new FakeUpload();
      uploads.add(upload);
      return upload;
    }

    @Override
    public RowArrival gatherRows(RowPages rows, HostBuffer permutation, RowUpload uploaded) {
      FakeUpload upload = (FakeUpload) uploaded;
      assertNotNull(upload, "no upload handed to the gather");
      assertFalse(upload.closed, "the upload was closed before the gather");
      pagesAtGather = rows.numPages();
      upload.pagesAtGather = upload.pages.size();
      for (int k = 0; k < upload.pages.size(); k++) {
        assertTrue(upload.pages.get(k) == rows.page(k), "page " + k + " sent out of order");
        assertEquals(rows.usedBytes(k), (long) upload.used.get(k), "page " + k + " grew after");
      }
      if (decline) {
        return null;
      }
      long[] records = new long[rows.numRows()];
      for (int i = 0; i < records.length; i++) {
        records[i] = rows.recordAddress(HostMemory.getInt(permutation.address() + 4L * i));
      }
      arrival = LazyArrival.sortedOver(rows::page, rows.numPages(), records, rows.recordBytes());
      return arrival;
    }
  }

  private static final class FakeUpload implements RowUpload {
    final List<HostBuffer> pages = new ArrayList<>();
    final List<Long> used = new ArrayList<>();
    int pagesAtGather;
    boolean closed;

    @Override
    public void add(HostBuffer page, long usedBytes) {
      assertFalse(closed, "a page sent after the upload was closed");
      pages.add(page);
      used.add(usedBytes);
    }

    @Override
    public int numPages() {
      return pages.size();
    }

    @Override
    public void close() {
      closed = true;
    }
  }
}
