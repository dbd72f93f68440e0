package io.gpusort.sql;

import io.gpusort.config.GpuSortConf;
import io.gpusort.engine.EngineOptions;
import io.gpusort.engine.Engines;
import io.gpusort.memory.HostBuffer;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.spark.SparkConf;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Without the plugin's executor side, the first thing of ours a local session touches (the SQL
 * extension when the session is made, or {@code GpuSort.byKey} / {@code withinPartitions} when
 * applied) starts what the executor plugin would have started: the engine opens on a background
 * thread, which makes a CUDA engine pin its host arena, make its workspaces and run its first
 * sorts. In local mode the driver's JVM runs the tasks, so the first query finds that done or
 * under way instead of doing it in task time. On a cluster the executors do it at their first
 * sort (or at their start, with the plugin). Once per JVM; failures are only logged: the task
 * opens the engine itself then.
 */
public final class EarlyStart {
  private static final Logger LOG = LoggerFactory.getLogger(EarlyStart.class);
  private static final AtomicBoolean STARTED = new AtomicBoolean();

  private EarlyStart() {}

  /** Starts the preparation with {@code settings} (spark.gpusort.* keys) if {@code conf} is local. */
  public static void forLocal(SparkConf conf, Map<String, String> settings) {
    if (!conf.get("spark.master", "").startsWith("local") || STARTED.getAndSet(true)) {
      return;
    }
    Thread thread = new Thread(() -> {
      try {
        GpuSortConf gpusort = GpuSortConf.of(settings);
        HostBuffer.configureArena(ArenaSizing.of(gpusort, conf));
        Engines.create(EngineOptions.of(gpusort));
      } catch (RuntimeException | LinkageError e) {
        LOG.info("spark-gpusort: the engine could not be prepared ahead ({}); the first sort "
            + "opens it", e.toString());
      }
    }, "gpusort-early-start");
    thread.setDaemon(true);
    thread.start();
  }
}
