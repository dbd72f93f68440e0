package io.gpusort.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
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
import java.util.IdentityHashMap;
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
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The intake's staging ring ({@link StagingRing}) against an upload whose "device" is host memory
 * and whose copies run late: a copy reads its staging buffer only when the intake waits for it
 * ({@code awaitRead}) or the upload completes, so a buffer written again too early tears rows;
 * and a page region sent from elsewhere is filled with garbage, so a row read from a page that
 * was not brought back is wrong. Checked: rows of several sizes (some larger than a staging
 * buffer) come out whole and in order when the device gathers them, when the gather is declined
 * (brought back, read through the permutation), when the upload stops part way, and when the host
 * must merge presorted runs; every staging buffer and page goes back.
 */
class StagedIntakeTest {
  private static final long PAGE_BYTES = 8192;
  private static final byte GARBAGE = (byte) 0xA5;

  @RegisterExtension
  final TaskMemory memory = new TaskMemory();

  /** Staging buffers of 64 bytes hold one or two records; 4k ones, many; 8 bytes, none. */
  @ParameterizedTest
  @ValueSource(longs = {256, 16 << 10, 32})
  void stagedRowsComeBackInOrderFromTheDevice(long stagingBytes) {
    StagingEngine engine = new StagingEngine(Mode.GATHER, Long.MAX_VALUE);
    List<long[]> rows = sealAndRead(engine, stagingBytes, 20_000, false);
    StagingUpload upload = engine.uploads.get(0);
    assertTrue(upload.closed, "the upload is still open after the seal");
    assertEquals(0, upload.restores, "rows brought back though the device put them in order");
    if (stagingBytes >= 64) {
      assertTrue(upload.stagedStretches > 100, "few stretches staged: " + upload.stagedStretches);
    } else {
      assertEquals(0, upload.stagedStretches, "a record staged in a buffer too small for it");
      assertTrue(upload.pageStretches > 0, "nothing sent");
    }
    assertEquals(20_000, rows.size());
  }

  @Test
  void aDeclinedGatherBringsTheRowsBackFirst() {
    StagingEngine engine = new StagingEngine(Mode.DECLINE, Long.MAX_VALUE);
    List<long[]> rows = sealAndRead(engine, 512, 20_000, false);
    StagingUpload upload = engine.uploads.get(0);
    assertEquals(1, upload.restores, "the rows were not brought back once");
    assertTrue(upload.stagedStretches > 100);
    assertEquals(20_000, rows.size());
  }

  @Test
  void anUploadThatStopsPartWayLeavesEveryRowInItsPage() {
    // The device takes 40k bytes, then stops: rows so far come back, the rest go into pages.
    StagingEngine engine = new StagingEngine(Mode.GATHER, 40_000);
    List<long[]> rows = sealAndRead(engine, 512, 20_000, false);
    StagingUpload upload = engine.uploads.get(0);
    assertTrue(upload.stopped, "the upload never stopped");
    assertEquals(1, upload.restores, "the rows sent were not brought back when it stopped");
    assertEquals(20_000, rows.size());
  }

  @Test
  void presortedRunsAreBroughtBackBeforeTheHostMergesThem() {
    StagingEngine engine = new StagingEngine(Mode.GATHER, Long.MAX_VALUE);
    List<long[]> rows = sealAndRead(engine, 512, 20_000, true);
    assertEquals(1, engine.uploads.get(0).restores, "merged without the rows brought back");
    assertEquals(20_000, rows.size());
  }

  @Test
  void rowsLostOnTheDeviceFailTheSeal() {
    StagingEngine engine = new StagingEngine(Mode.DECLINE, Long.MAX_VALUE);
    engine.loseRows = true;
    SortPlan plan = plan();
    RunBuilder builder = builder(plan, engine, 512);
    fill(builder, 5_000, false);
    assertThrows(IllegalStateException.class,
        () -> builder.seal(stage(plan, engine), false, SortMetrics.NONE, () -> { }));
    builder.close();
    assertTrue(engine.uploads.get(0).closed);
  }

  @Test
  void stagingOffWritesThePagesAndSendsThemWhole() {
    StagingEngine engine = new StagingEngine(Mode.GATHER, Long.MAX_VALUE);
    List<long[]> rows = sealAndRead(engine, 0, 20_000, false);
    StagingUpload upload = engine.uploads.get(0);
    assertEquals(0, upload.stagedStretches + upload.pageStretches, "rows staged with staging off");
    assertTrue(upload.wholePages > 0, "no page sent ahead");
    assertEquals(20_000, rows.size());
  }

  /** Fills a run, seals it, reads it back and checks every row whole and the order. */
  private List<long[]> sealAndRead(StagingEngine engine, long stagingBytes, int n,
      boolean presorted) {
    SortPlan plan = plan();
    RunBuilder builder = builder(plan, engine, stagingBytes);
    List<long[]> written = fill(builder, n, presorted);
    SortedRun run = builder.seal(stage(plan, engine), presorted, SortMetrics.NONE, () -> { });
    List<long[]> read = new ArrayList<>();
    try (MemoryRunCursor cursor = new MemoryRunCursor(run, memory.get(), 3, 1, false)) {
      while (cursor.advance()) {
        read.add(rowValues(cursor.row()));
      }
    }
    run.close();
    builder.close();
    written.sort((a, b) -> Long.compare(a[0], b[0]));
    assertEquals(written.size(), read.size(), "rows lost or added");
    for (int i = 0; i < read.size(); i++) {
      assertTrue(Arrays.equals(written.get(i), read.get(i)),
          "row " + i + ": " + Arrays.toString(read.get(i)) + " against "
              + Arrays.toString(written.get(i)));
    }
    return read;
  }

  /**
   * Rows (k, v, s): a random key (ascending runs of 1000 where {@code presorted}), its complement
   * and a binary of 0 to 40 bytes derived from the key; returns each row's values.
   */
  private static List<long[]> fill(RunBuilder builder, int n, boolean presorted) {
    SplittableRandom random = new SplittableRandom(7);
    List<long[]> written = new ArrayList<>();
    long[] keys = new long[n];
    for (int i = 0; i < n; i++) {
      keys[i] = random.nextLong();
    }
    if (presorted) {
      for (int from = 0; from < n; from += 1000) {
        Arrays.sort(keys, from, Math.min(n, from + 1000));
      }
    }
    for (int i = 0; i < n; i++) {
      UnsafeRow row = row(keys[i], (int) Math.floorMod(keys[i], 41));
      assertTrue(builder.tryMakeRoom(row.getSizeInBytes()));
      builder.append(row);
      written.add(rowValues(row));
    }
    return written;
  }

  private static UnsafeRow row(long key, int binaryBytes) {
    byte[] binary = new byte[binaryBytes];
    for (int b = 0; b < binaryBytes; b++) {
      binary[b] = (byte) (key >>> (8 * (b % 8)) ^ b);
    }
    int size = 8 + 3 * 8 + ((binaryBytes + 7) & ~7);
    byte[] bytes = new byte[size];
    UnsafeRow row = new UnsafeRow(3);
    row.pointTo(bytes, size);
    row.setLong(0, key);
    row.setLong(1, ~key);
    long offsetAndSize = ((long) 32 << 32) | binaryBytes;
    row.setLong(2, offsetAndSize);
    System.arraycopy(binary, 0, bytes, 32, binaryBytes);
    return row;
  }

  /** Key, complement and a checksum of the binary, which must be the key's. */
  private static long[] rowValues(UnsafeRow row) {
    byte[] binary = row.getBinary(2);
    long key = row.getLong(0);
    assertEquals(Math.floorMod(key, 41), binary.length, "binary length of key " + key);
    for (int b = 0; b < binary.length; b++) {
      assertEquals((byte) (key >>> (8 * (b % 8)) ^ b), binary[b], "binary byte " + b);
    }
    return new long[] {key, row.getLong(1), binary.length};
  }

  private static SortPlan plan() {
    AttributeReference key = RowKeyEncoderTest.attribute("k", DataTypes.LongType, false);
    StructType schema = new StructType(new StructField[] {
        new StructField("k", DataTypes.LongType, false, Metadata.empty()),
        new StructField("v", DataTypes.LongType, false, Metadata.empty()),
        new StructField("s", DataTypes.BinaryType, false, Metadata.empty())});
    KeySpec spec = KeySpec.of(List.of(RowKeyEncoderTest.sortOrder(key, false, true)),
        ScalaCollections.list(List.<Attribute>of(key)), 16);
    return new SortPlan(spec, schema, GpuSortConf.of(Map.of()), 4, 64L << 20);
  }

  private static EngineStage stage(SortPlan plan, SortEngine engine) {
    return new EngineStage(plan, options -> engine, () -> { });
  }

  private RunBuilder builder(SortPlan plan, SortEngine engine, long stagingBytes) {
    EngineStage stage = stage(plan, engine);
    return new RunBuilder(new RowKeys(plan), memory.get(), PAGE_BYTES, false, 3, stage::openRowUpload,
        RunBuilder.INITIAL_ROWS, stagingBytes);
  }

  private enum Mode { GATHER, DECLINE }

  /** Sorts on the CPU engine; its "device" is the upload's host copy. */
  private static final class StagingEngine extends CpuBackedDeviceEngine {
    final Mode mode;
    final long deviceBytes;
    final List<StagingUpload> uploads = new ArrayList<>();
    boolean loseRows;

    StagingEngine(Mode mode, long deviceBytes) {
      this.mode = mode;
      this.deviceBytes = deviceBytes;
    }

    @Override
    public RowUpload openRowUpload() {
      StagingUpload upload = new StagingUpload(deviceBytes, loseRows);
      uploads.add(upload);
      return upload;
    }

    @Override
    public RowArrival gatherRows(RowPages rows, HostBuffer permutation, RowUpload uploaded) {
      StagingUpload upload = (StagingUpload) uploaded;
      assertFalse(upload.closed, "the upload was closed before the gather");
      if (mode == Mode.DECLINE) {
        return null;
      }
      upload.flush();
      // Rows staged nowhere (staging off) or brought back (the upload stopped): in the pages.
      boolean fromPages = upload.stopped || upload.pages.isEmpty();
      long[] records = new long[rows.numRows()];
      long[] base = new long[rows.numPages()];
      for (int k = 1; k < base.length; k++) {
        base[k] = base[k - 1] + rows.usedBytes(k - 1);
      }
      for (int i = 0; i < records.length; i++) {
        int r = HostMemory.getInt(permutation.address() + 4L * i);
        long pointer = HostMemory.getLong(rows.pointers().address() + 8L * r);
        int page = RowPages.pageOf(pointer);
        records[i] = fromPages
            ? rows.page(page).address() + RowPages.offsetOf(pointer)
            : upload.device.address() + base[page] + RowPages.offsetOf(pointer);
        if (!fromPages) {
          assertTrue(upload.pages.get(page) == rows.page(page), "page " + page + " not sent");
        }
      }
      return LazyArrival.sortedOver(rows::page, rows.numPages(), records, rows.recordBytes());
    }
  }

  /**
   * An upload into a host buffer whose copies are done late: at {@code awaitRead} of their
   * source, or before the device is read. Stops (bringing back what it holds) once it would hold
   * more than {@code capacity} bytes.
   */
  private static final class StagingUpload implements RowUpload {
    final HostBuffer device = HostBuffer.allocate(4L << 20);
    final long capacity;
    final boolean loseRows;
    final List<HostBuffer> pages = new ArrayList<>();
    final List<Long> pageBytes = new ArrayList<>();
    final List<Boolean> staged = new ArrayList<>();
    final List<long[]> pending = new ArrayList<>();
    final List<HostBuffer> pendingSources = new ArrayList<>();
    final Map<HostBuffer, Boolean> sources = new IdentityHashMap<>();
    long used;
    int stagedStretches;
    int pageStretches;
    int wholePages;
    int restores;
    boolean stopped;
    boolean closed;

    StagingUpload(long capacity, boolean loseRows) {
      this.capacity = capacity;
      this.loseRows = loseRows;
    }

    @Override
    public void add(HostBuffer page, long usedBytes) {
      if (!stopped) {
        wholePages++;
      }
    }

    @Override
    public boolean takesStagedRows() {
      return true;
    }

    @Override
    public boolean canSendFrom(HostBuffer source) {
      return true;
    }

    @Override
    public boolean send(HostBuffer page, long offset, HostBuffer source, long sourceOffset,
        long bytes) {
      assertFalse(closed, "sent after close");
      if (stopped) {
        return false;
      }
      if (used + bytes > Math.min(capacity, device.sizeBytes())) {
        stopped = true;
        restorePages();
        return false;
      }
      int last = pages.size() - 1;
      if (last < 0 || pages.get(last) != page) {
        assertEquals(0, offset, "a new page's first stretch not at its start");
        pages.add(page);
        pageBytes.add(0L);
        staged.add(false);
        last++;
      }
      assertEquals((long) pageBytes.get(last), offset, "stretches not back to back");
      pageBytes.set(last, offset + bytes);
      if (source != page) {
        staged.set(last, true);
        stagedStretches++;
        // The page does not hold these bytes: whatever it holds there is garbage.
        HostMemory.fill(page.address() + offset, bytes, GARBAGE);
      } else {
        pageStretches++;
      }
      pending.add(new long[] {source.address() + sourceOffset, device.address() + used, bytes});
      pendingSources.add(source);
      used += bytes;
      return true;
    }

    @Override
    public void awaitRead(HostBuffer source) {
      int lastRead = -1;
      for (int i = 0; i < pendingSources.size(); i++) {
        if (pendingSources.get(i) == source) {
          lastRead = i;
        }
      }
      for (int i = 0; i <= lastRead; i++) {
        copy(pending.get(0));
        pending.remove(0);
        pendingSources.remove(0);
      }
    }

    void flush() {
      pending.forEach(StagingUpload::copy);
      pending.clear();
      pendingSources.clear();
    }

    private static void copy(long[] c) {
      HostMemory.copy(c[0], c[1], c[2]);
    }

    @Override
    public void restorePages() {
      if (!staged.contains(true)) {
        return;
      }
      if (loseRows) {
        throw new IllegalStateException("lost");
      }
      flush();
      restores++;
      long base = 0;
      for (int k = 0; k < pages.size(); k++) {
        if (staged.get(k)) {
          HostMemory.copy(device.address() + base, pages.get(k).address(), pageBytes.get(k));
          staged.set(k, false);
        }
        base += pageBytes.get(k);
      }
    }

    @Override
    public int numPages() {
      return stopped ? 0 : pages.size();
    }

    @Override
    public void close() {
      // Copies in flight are waited for: only then may the staging buffers go back.
      flush();
      closed = true;
      device.close();
    }
  }
}
