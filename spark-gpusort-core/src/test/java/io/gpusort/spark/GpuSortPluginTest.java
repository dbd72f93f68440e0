package io.gpusort.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.codahale.metrics.Gauge;
import com.codahale.metrics.MetricRegistry;
import io.gpusort.engine.EngineStats;
import io.gpusort.engine.Engines;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.spark.SparkConf;
import org.apache.spark.api.plugin.PluginContext;
import org.apache.spark.resource.ResourceInformation;
import org.junit.jupiter.api.Test;

/** The plugin's driver and executor sides, on a plain SparkConf and a fake plugin context. */
class GpuSortPluginTest {
  private static final String EXTENSIONS = GpuSortExtensions.class.getName();

  @Test
  void driverAddsTheSqlExtensionOnce() {
    SparkConf conf = new SparkConf(false).set("spark.gpusort.engine", "cpu");
    GpuSortDriverPlugin.prepare(conf);
    assertEquals(EXTENSIONS, conf.get("spark.sql.extensions"));
    GpuSortDriverPlugin.prepare(conf);
    assertEquals(EXTENSIONS, conf.get("spark.sql.extensions"));

    SparkConf other = new SparkConf(false).set("spark.sql.extensions", "com.example.Ext");
    GpuSortDriverPlugin.prepare(other);
    assertEquals("com.example.Ext," + EXTENSIONS, other.get("spark.sql.extensions"));
  }

  @Test
  void driverRejectsAnInvalidValueNamingTheKey() {
    SparkConf conf = new SparkConf(false).set("spark.gpusort.chunk.maxBytes", "banana");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> GpuSortDriverPlugin.prepare(conf));
    assertTrue(e.getMessage().contains("spark.gpusort.chunk.maxBytes"), e.getMessage());
  }

  @Test
  void driverKeepsEachExecutorsReport() {
    GpuSortDriverPlugin driver = new GpuSortDriverPlugin();
    GpuSortPlugin.EngineReport report =
        new GpuSortPlugin.EngineReport("exec-test-1", "host-a", "cpu (2 cores)", "");
    assertEquals(Boolean.TRUE, driver.receive(report));
    assertEquals(report, GpuSortPlugin.executorEngines().get("exec-test-1"));
    assertThrows(IllegalArgumentException.class, () -> driver.receive("something else"));
  }

  @Test
  void executorOpensTheEngineReportsItAndRecordsTasks() {
    FakeContext ctx = new FakeContext(new SparkConf(false).set("spark.gpusort.engine", "cpu")
        .set("spark.gpusort.memory.poolMaxIdleBytes", "3m"),
        Map.of("gpu", new ResourceInformation("gpu", new String[] {"3"})));
    GpuSortExecutorPlugin executor = new GpuSortExecutorPlugin();
    long boundBefore = io.gpusort.memory.HostBuffer.poolMaxIdleBytes();
    try {
      executorReportsAndRecords(ctx, executor);
    } finally {
      io.gpusort.memory.HostBuffer.configurePools(boundBefore, 30_000);
    }
  }

  private static void executorReportsAndRecords(FakeContext ctx, GpuSortExecutorPlugin executor) {
    executor.init(ctx, Map.of());

    assertEquals(3L << 20, io.gpusort.memory.HostBuffer.poolMaxIdleBytes(),
        "the executor bounds its pools from spark.gpusort.memory.poolMaxIdleBytes");
    assertEquals(1, ctx.sent.size());
    GpuSortPlugin.EngineReport report = (GpuSortPlugin.EngineReport) ctx.sent.get(0);
    assertEquals("7", report.executorId());
    assertEquals("3", report.gpu(), "the executor's first GPU address");
    assertEquals(Engines.describe(Engines.cpu()), report.engine());

    Gauge<?> rows = ctx.registry.getGauges().get("rowsSorted");
    long before = (Long) rows.getValue();
    // A task on this thread that sorts 1000 rows, then one that sorts none.
    executor.onTaskStart();
    EngineStats.recordCall(Engines.cpu(), 1, 1000, 8000);
    EngineStats.recordSortNanos(5_000_000);
    executor.onTaskSucceeded();
    executor.onTaskStart();
    executor.onTaskSucceeded();

    assertEquals(before + 1000, (Long) rows.getValue());
    assertEquals(1, ctx.registry.histogram("taskRowsSorted").getCount());
    assertEquals(1000, ctx.registry.histogram("taskRowsSorted").getSnapshot().getMax());
    assertEquals(5, ctx.registry.histogram("taskSortMillis").getSnapshot().getMax());
    assertTrue(ctx.registry.getGauges().keySet().containsAll(List.of("engineCalls",
        "rowsSortedOnGpu", "bytesToDevice", "bytesFromDevice", "engineFallbacks",
        "sortTimeNanos", "hostBytesInUse", "hostBytesPooledIdle", "pinnedArenaTargetBytes",
        "pinnedArenaBytes", "pinnedArenaBytesInUse", "pinnedArenaPeakBytesInUse",
        "pinnedArenaRefusedBytes", "hostMemoryWaitNanos")),
        ctx.registry.getGauges().keySet().toString());
    // The arena's gauges read the process's arena (none on the CPU engine: zeros); the wait is
    // the time taken by transferable buffers, which the row path takes.
    assertEquals(io.gpusort.memory.HostBuffer.arenaStats().targetBytes(),
        (Long) ctx.registry.getGauges().get("pinnedArenaTargetBytes").getValue());
    long waitBefore = (Long) ctx.registry.getGauges().get("hostMemoryWaitNanos").getValue();
    io.gpusort.memory.HostBuffer.acquireTransferable(1 << 20).close();
    assertTrue((Long) ctx.registry.getGauges().get("hostMemoryWaitNanos").getValue() > waitBefore);
    executor.shutdown();
  }

  /** A plugin context that records what the executor sends. */
  private static final class FakeContext implements PluginContext {
    final SparkConf conf;
    final Map<String, ResourceInformation> resources;
    final MetricRegistry registry = new MetricRegistry();
    final List<Object> sent = new ArrayList<>();

    FakeContext(SparkConf conf, Map<String, ResourceInformation> resources) {
      this.conf = conf;
      this.resources = resources;
    }

    @Override
    public MetricRegistry metricRegistry() {
      return registry;
    }

    @Override
    public SparkConf conf() {
      return conf;
    }

    @Override
    public String executorID() {
      return "7";
    }

    @Override
    public String hostname() {
      throw new UnsupportedOperationException("executors of a cluster have no RPC address");
    }

    @Override
    public Map<String, ResourceInformation> resources() {
      return resources;
    }

    @Override
    public void send(Object message) {
      sent.add(message);
    }

    @Override
    public Object ask(Object message) {
      throw new UnsupportedOperationException();
    }
  }
}
