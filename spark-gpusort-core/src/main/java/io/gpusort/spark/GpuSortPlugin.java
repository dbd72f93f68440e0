package io.gpusort.spark;

import io.gpusort.config.GpuSortConf;
import java.io.Serializable;
import java.util.HashMap;
import java.util.Map;
import org.apache.spark.SparkConf;
import org.apache.spark.api.plugin.DriverPlugin;
import org.apache.spark.api.plugin.ExecutorPlugin;
import org.apache.spark.api.plugin.SparkPlugin;
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
 * GPU engines at shutdown. The work is in {@link GpuSortDriverPlugin} and {@link
 * GpuSortExecutorPlugin}.
 */
public final class GpuSortPlugin implements SparkPlugin {
  static final String EXTENSIONS_KEY = "spark.sql.extensions";

  @Override
  public DriverPlugin driverPlugin() {
    return new GpuSortDriverPlugin();
  }

  @Override
  public ExecutorPlugin executorPlugin() {
    return new GpuSortExecutorPlugin();
  }

  /** What an executor tells the driver once its engine is open. */
  public record EngineReport(String executorId, String host, String engine, String gpu)
      implements Serializable {}

  /** The executors' reports this driver received, by executor id (for logs, tests, tools). */
  public static Map<String, EngineReport> executorEngines() {
    return Map.copyOf(GpuSortDriverPlugin.REPORTS);
  }

  /** The spark.gpusort.* settings of a Spark configuration. */
  static Map<String, String> settings(SparkConf conf) {
    Map<String, String> all = new HashMap<>();
    for (Tuple2<String, String> kv : conf.getAll()) {
      all.put(kv._1(), kv._2());
    }
    return GpuSortConf.select(all);
  }

}
