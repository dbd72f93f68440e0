package io.gpusort.spark;

import io.gpusort.config.GpuSortConf;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkContext;
import org.apache.spark.api.plugin.DriverPlugin;
import org.apache.spark.api.plugin.PluginContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The driver side of {@link GpuSortPlugin}: validates the configuration, adds the SQL extension,
 * and keeps each executor's engine report.
 */
final class GpuSortDriverPlugin implements DriverPlugin {
  private static final Logger LOG = LoggerFactory.getLogger(GpuSortPlugin.class);
  static final Map<String, GpuSortPlugin.EngineReport> REPORTS = new ConcurrentHashMap<>();

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
    Map<String, String> settings = GpuSortPlugin.settings(conf);
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
    String extensions = conf.get(GpuSortPlugin.EXTENSIONS_KEY, "").trim();
    String ours = GpuSortExtensions.class.getName();
    if (!java.util.Arrays.asList(extensions.split("\\s*,\\s*")).contains(ours)) {
      conf.set(GpuSortPlugin.EXTENSIONS_KEY, extensions.isEmpty() ? ours : extensions + "," + ours);
    }
    LOG.info("spark-gpusort plugin on the driver: engine {}, SQL sorts {} ({} set)",
        settings.getOrDefault(GpuSortConf.ENGINE.key(), GpuSortConf.ENGINE.defaultString()),
        Boolean.parseBoolean(settings.getOrDefault(GpuSortConf.SQL_ENABLED.key(), "true"))
            ? "on the engine" : "on Spark's sort", GpuSortPlugin.EXTENSIONS_KEY);
  }

  @Override
  public Object receive(Object message) {
    if (message instanceof GpuSortPlugin.EngineReport report) {
      REPORTS.put(report.executorId(), report);
      LOG.info("spark-gpusort: executor {} on {} sorts on {}{}", report.executorId(),
          report.host(), report.engine(), report.gpu().isEmpty() ? "" : " (GPU " + report.gpu()
              + ")");
      return Boolean.TRUE;
    }
    throw new IllegalArgumentException("spark-gpusort: unexpected message " + message);
  }
}
