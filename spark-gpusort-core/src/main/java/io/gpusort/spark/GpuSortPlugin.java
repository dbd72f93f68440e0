package io.gpusort.spark;

import com.codahale.metrics.Gauge;
import com.codahale.metrics.Histogram;
import com.codahale.metrics.MetricRegistry;
import io.gpusort.config.GpuSortConf;
import io.gpusort.engine.EngineOptions;
import io.gpusort.engine.EngineStats;
import io.gpusort.engine.Engines;
import io.gpusort.engine.SortEngine;
import java.io.Serializable;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkContext;
import org.apache.spark.api.plugin.DriverPlugin;
import org.apache.spark.api.plugin.ExecutorPlugin;
import org.apache.spark.api.plugin.PluginContext;
import org.apache.spark.api.plugin.SparkPlugin;
import org.apache.spark.resource.ResourceInformation;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.Tuple2;

/**
 * The plugin for {@code spark.plugins=io.gpusort.spark.GpuSortPlugin}.
 *
 * <p>Driver side: validates every {@code spark.gpusort.*} key before any job runs (a bad value
 * fails the application at start with the key named), adds {@link GpuSortExtensions} to {@code
 * spark.sql.extensions} when it is missing (so Spark SQL's sorts run on the engine with no code
 * change), and logs which engine each executor got.
 *
 * <p>Executor side: opens the engine once per executor (the device is the executor's first GPU
 * address from Spark's resource scheduling, else {@code spark.gpusort.cuda.device}), reports it
 * to the driver, registers the executor's sort counters with Spark's metrics system (source
 * {@code plugin.io.gpusort.spark.GpuSortPlugin}), records each task's sorted rows, and closes the
 * GPU engines at shutdown.
 */
public final class GpuSortPlugin implements SparkPlugin {
  /** Prefix of the plugin's configuration keys. */
  static final String PREFIX = "spark.gpusort.";
  static final String EXTENSIONS_KEY = "spark.sql.extensions";

  @Override
  public DriverPlugin driverPlugin() {
    return new Driver();
  }

  @Override
  public ExecutorPlugin executorPlugin() {
    return new Executor();
  }

  /** What an executor tells the driver once its engine is open. */
  public record EngineReport(String executorId, String host, String engine, String gpu)
      implements Serializable {}

  /** The executors' reports this driver received, by executor id (for logs, tests, tools). */
  public static Map<String, EngineReport> executorEngines() {
    return Map.copyOf(Driver.REPORTS);
  }

  /** The spark.gpusort.* settings of a Spark configuration. */
  static Map<String, String> settings(SparkConf conf) {
    Map<String, String> settings = new HashMap<>();
    for (Tuple2<String, String> kv : conf.getAllWithPrefix(PREFIX)) {
      settings.put(PREFIX + kv._1(), kv._2());
    }
    return settings;
  }

  static final class Driver implements DriverPlugin {
    private static final Logger LOG = LoggerFactory.getLogger(GpuSortPlugin.class);
    static final Map<String, EngineReport> REPORTS = new ConcurrentHashMap<>();

    @Override
    public Map<String, String> init(SparkContext sc, PluginContext ctx) {
      prepare(sc.conf());
      return Map.of();
    }

    /**
     * Validates the spark.gpusort.* keys of the driver's configuration (an invalid value fails
     * with the key named; an unknown key is logged) and adds {@link GpuSortExtensions} to {@code
     * spark.sql.extensions} unless it is there, before any session reads it.
     *
     * @throws IllegalArgumentException naming the key and value that are invalid
     */
    static void prepare(SparkConf conf) {
      Map<String, String> settings = settings(conf);
      try {
        GpuSortConf.of(settings);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("spark-gpusort: invalid configuration: "
            + e.getMessage(), e);
      }
      for (String key : settings.keySet()) {
        if (GpuSortConf.entries().stream().noneMatch(entry -> entry.key().equals(key))) {
          LOG.warn("spark-gpusort: unknown configuration key {} (ignored)", key);
        }
      }
      String extensions = conf.get(EXTENSIONS_KEY, "").trim();
      String ours = GpuSortExtensions.class.getName();
      if (!java.util.Arrays.asList(extensions.split("\\s*,\\s*")).contains(ours)) {
        conf.set(EXTENSIONS_KEY, extensions.isEmpty() ? ours : extensions + "," + ours);
      }
      LOG.info("spark-gpusort plugin on the driver: engine {}, SQL sorts {} ({} set)",
          settings.getOrDefault(GpuSortConf.ENGINE.key(), GpuSortConf.ENGINE.defaultString()),
          Boolean.parseBoolean(settings.getOrDefault(GpuSortConf.SQL_ENABLED.key(), "true"))
              ? "on the engine" : "on Spark's sort", EXTENSIONS_KEY);
    }

    @Override
    public Object receive(Object message) {
      if (message instanceof EngineReport report) {
        REPORTS.put(report.executorId(), report);
        LOG.info("spark-gpusort: executor {} on {} sorts on {}{}", report.executorId(),
            report.host(), report.engine(), report.gpu().isEmpty() ? "" : " (GPU " + report.gpu()
                + ")");
        return Boolean.TRUE;
      }
      throw new IllegalArgumentException("spark-gpusort: unexpected message " + message);
    }
  }

  static final class Executor implements ExecutorPlugin {
    private static final Logger LOG = LoggerFactory.getLogger(GpuSortPlugin.class);
    private final ThreadLocal<long[]> taskStart = new ThreadLocal<>();
    private Histogram taskRows;
    private Histogram taskSortMillis;

    @Override
    public void init(PluginContext ctx, Map<String, String> extraConf) {
      Map<String, String> settings = settings(ctx.conf());
      EngineOptions options = EngineOptions.of(GpuSortConf.of(settings));
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
      // that cannot open fails the executor here with the reason.
      SortEngine engine = Engines.create(options);
      String description = Engines.describe(engine);
      LOG.info("spark-gpusort: executor {} sorts on {}", ctx.executorID(), description);
      try {
        ctx.send(new EngineReport(ctx.executorID(), hostName(), description, gpu));
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
      taskRows = registry.histogram("taskRowsSorted");
      taskSortMillis = registry.histogram("taskSortMillis");
    }

    private static void gauge(MetricRegistry registry, String name, LongSupplier value) {
      registry.register(name, (Gauge<Long>) value::getAsLong);
    }

    @Override
    public void onTaskStart() {
      taskStart.set(new long[] {EngineStats.threadRows(), EngineStats.threadSortNanos()});
    }

    @Override
    public void onTaskSucceeded() {
      taskEnded();
    }

    @Override
    public void onTaskFailed(org.apache.spark.TaskFailedReason reason) {
      taskEnded();
    }

    /** A task's sorted rows and sort time: what its thread sorted between start and end. */
    private void taskEnded() {
      long[] start = taskStart.get();
      taskStart.remove();
      if (start == null || taskRows == null) {
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
      Engines.shutdown();
    }
  }
}
