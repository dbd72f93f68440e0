package io.gpusort.spark;

import com.codahale.metrics.Gauge;
import com.codahale.metrics.Histogram;
import com.codahale.metrics.MetricRegistry;
import io.gpusort.config.GpuSortConf;
import io.gpusort.engine.EngineOptions;
import io.gpusort.engine.EngineStats;
import io.gpusort.engine.Engines;
import io.gpusort.engine.SortEngine;
import io.gpusort.memory.HostBuffer;
import io.gpusort.memory.HostMemory;
import io.gpusort.memory.RunningTasks;
import io.gpusort.sql.ArenaSizing;
import io.gpusort.sql.EarlyStart;
import java.util.Map;
import java.util.function.LongSupplier;
import org.apache.spark.TaskContext;
import org.apache.spark.api.plugin.ExecutorPlugin;
import org.apache.spark.api.plugin.PluginContext;
import org.apache.spark.resource.ResourceInformation;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The executor side of {@link GpuSortPlugin}: opens the engine once, reports it to the driver,
 * registers the executor's sort metrics, records each task's sorting and tells the page-locked
 * arena which tasks run ({@link RunningTasks}: it pins between them), closes the GPU engines at
 * shutdown.
 */
final class GpuSortExecutorPlugin implements ExecutorPlugin {
  private static final Logger LOG = LoggerFactory.getLogger(GpuSortPlugin.class);
  private final ThreadLocal<long[]> taskStart = new ThreadLocal<>();
  private Histogram taskRows;
  private Histogram taskSortMillis;

  @Override
  public void init(PluginContext ctx, Map<String, String> extraConf) {
    Map<String, String> settings = GpuSortPlugin.settings(ctx.conf());
    GpuSortConf conf = GpuSortConf.of(settings);
    // The executor's bound on idle pooled memory, before any sort takes a buffer.
    HostBuffer.configurePools(conf.get(GpuSortConf.POOL_MAX_IDLE_BYTES),
        conf.get(GpuSortConf.POOL_IDLE_TIMEOUT));
    // The page-locked arena, made when a CUDA engine opens below and pinned in the background.
    HostBuffer.configureArena(ArenaSizing.of(conf, ctx.conf()));
    EngineOptions options = EngineOptions.of(conf);
    String gpu = "";
    ResourceInformation gpus = ctx.resources().get("gpu");
    if (gpus != null && gpus.addresses().length > 0) {
      gpu = gpus.addresses()[0];
      try {
        options = options.withCudaDevice(Integer.parseInt(gpu.trim()));
      } catch (NumberFormatException e) {
        LOG.warn("spark-gpusort: GPU address {} is not a CUDA ordinal; using {}", gpu,
            options.cudaDevice());
      }
    }
    // Opens the device once for the executor (CUDA context, Vulkan instance, kernels), so the
    // first task does not pay for it; auto falls back to the CPU engine, a demanded engine
    // that cannot open fails the executor here with the reason. A CUDA engine then pins its
    // arena, makes its workspaces and runs its first sorts on background threads, then the row
    // path's.
    SortEngine engine = Engines.create(options);
    EarlyStart.warmUpRowPath(engine, conf);
    String description = Engines.describe(engine);
    LOG.info("spark-gpusort: executor {} sorts on {}", ctx.executorID(), description);
    try {
      ctx.send(new GpuSortPlugin.EngineReport(ctx.executorID(), hostName(), description, gpu));
    } catch (java.io.IOException e) {
      LOG.warn("spark-gpusort: could not report the engine to the driver", e);
    }
    registerMetrics(ctx.metricRegistry());
  }

  /**
   * This machine's name. (PluginContext.hostname() reads the RPC server's address, which an
   * executor of a cluster does not have.)
   */
  private static String hostName() {
    try {
      return java.net.InetAddress.getLocalHost().getHostName();
    } catch (java.net.UnknownHostException e) {
      return "unknown host";
    }
  }

  private void registerMetrics(MetricRegistry registry) {
    gauge(registry, "engineCalls", EngineStats::engineCalls);
    gauge(registry, "rowsSorted", EngineStats::rows);
    gauge(registry, "rowsSortedOnGpu", EngineStats::gpuRows);
    gauge(registry, "bytesToDevice", EngineStats::bytesToDevice);
    gauge(registry, "bytesFromDevice", EngineStats::bytesFromDevice);
    gauge(registry, "engineFallbacks", EngineStats::fallbacks);
    gauge(registry, "sortTimeNanos", EngineStats::sortNanos);
    gauge(registry, "hostBytesInUse", HostMemory::bytesInUse);
    gauge(registry, "hostBytesPooledIdle", HostBuffer::pooledIdleBytes);
    gauge(registry, "pinnedArenaTargetBytes", () -> HostBuffer.arenaStats().targetBytes());
    gauge(registry, "pinnedArenaBytes", () -> HostBuffer.arenaStats().readyBytes());
    gauge(registry, "pinnedArenaBytesInUse", () -> HostBuffer.arenaStats().inUseBytes());
    gauge(registry, "pinnedArenaPeakBytesInUse", () -> HostBuffer.arenaStats().peakInUseBytes());
    gauge(registry, "pinnedArenaRefusedBytes", () -> HostBuffer.arenaStats().refusedBytes());
    gauge(registry, "hostMemoryWaitNanos", HostBuffer::acquireNanos);
    taskRows = registry.histogram("taskRowsSorted");
    taskSortMillis = registry.histogram("taskSortMillis");
  }

  private static void gauge(MetricRegistry registry, String name, LongSupplier value) {
    registry.register(name, (Gauge<Long>) value::getAsLong);
  }

  @Override
  public void onTaskStart() {
    long[] before = taskStart.get();
    if (before != null && before[2] >= 0) {
      // The thread's last task ended without an end hook: it runs no more.
      RunningTasks.ended(before[2]);
    }
    // Spark sets the task's context before this hook and unsets it before the end hooks.
    TaskContext task = TaskContext.get();
    long taskId = task == null ? -1 : task.taskAttemptId();
    if (taskId >= 0) {
      RunningTasks.started(taskId);
    }
    taskStart.set(new long[] {EngineStats.threadRows(), EngineStats.threadSortNanos(), taskId});
  }

  @Override
  public void onTaskSucceeded() {
    taskEnded();
  }

  @Override
  public void onTaskFailed(org.apache.spark.TaskFailedReason reason) {
    taskEnded();
  }

  /**
   * The task ended: the arena may pin once the executor is idle; its sorted rows and sort time
   * (what its thread sorted between start and end) go to the histograms.
   */
  private void taskEnded() {
    long[] start = taskStart.get();
    taskStart.remove();
    if (start == null) {
      return;
    }
    if (start[2] >= 0) {
      RunningTasks.ended(start[2]);
    }
    if (taskRows == null) {
      return;
    }
    long rows = EngineStats.threadRows() - start[0];
    if (rows > 0) {
      taskRows.update(rows);
      taskSortMillis.update((EngineStats.threadSortNanos() - start[1]) / 1_000_000);
    }
  }

  @Override
  public void shutdown() {
    HostBuffer.trimPools();
    Engines.shutdown();
  }
}
