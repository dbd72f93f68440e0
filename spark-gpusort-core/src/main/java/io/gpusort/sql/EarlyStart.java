package io.gpusort.sql;

import io.gpusort.config.GpuSortConf;
import io.gpusort.engine.EngineOptions;
import io.gpusort.engine.Engines;
import io.gpusort.engine.SortEngine;
import io.gpusort.memory.HostBuffer;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkContext;
import org.apache.spark.sql.SparkSession;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Without the plugin's executor side, the first thing of ours a local session touches (the SQL
 * extension when the session is made, or {@code GpuSort.byKey} / {@code withinPartitions} when
 * applied) starts what the executor plugin would have started: the engine opens on a background
 * thread, which makes a CUDA engine pin its host arena, make its workspaces and run its first
 * sorts, then the row path's ({@link RowPathWarmup}). In local mode the driver's JVM runs the
 * tasks, so the first query finds that done or under way instead of doing it in task time. On a
 * cluster the executors do it at their first sort (or at their start, with the plugin). Once per
 * JVM; failures are only logged: the task opens the engine itself then. Each local context also
 * gets a listener that tells the arena which tasks run ({@link LocalTaskListener}), as the
 * plugin's executor side does.
 */
public final class EarlyStart {
  private static final Logger LOG = LoggerFactory.getLogger(EarlyStart.class);
  private static final AtomicBoolean STARTED = new AtomicBoolean();
  private static volatile Thread thread;

  private EarlyStart() {}

  /**
   * Starts the preparation with {@code settings} (spark.gpusort.* keys) if {@code context} is
   * local.
   */
  public static void forLocal(SparkContext context, Map<String, String> settings) {
    SparkConf conf = context.getConf();
    if (!conf.get("spark.master", "").startsWith("local")) {
      return;
    }
    LocalTaskListener.listenTo(context);
    if (STARTED.getAndSet(true)) {
      return;
    }
    Thread start = new Thread(() -> {
      try {
        GpuSortConf gpusort = GpuSortConf.of(settings);
        HostBuffer.configureArena(ArenaSizing.of(gpusort, conf));
        warmUpRowPath(Engines.create(EngineOptions.of(gpusort)), gpusort);
      } catch (RuntimeException | LinkageError e) {
        LOG.info("spark-gpusort: the engine could not be prepared ahead ({}); the first sort "
            + "opens it", e.toString());
      }
    }, "gpusort-early-start");
    start.setDaemon(true);
    thread = start;
    start.start();
  }

  /**
   * Starts the driver's planning warm-up ({@link PlanningWarmup}) for {@code session}'s context
   * unless {@code settings} (spark.gpusort.* keys) turn it off: once per JVM, local or not, since
   * a driver plans every query.
   */
  public static void forDriver(SparkSession session, Map<String, String> settings) {
    PlanningWarmup.start(session, settings);
  }

  /**
   * Starts the row path's warm-up on {@code engine} in the background (once per engine, a CUDA
   * engine only) unless {@code conf} turns it off: for the executor plugin, which opens the engine
   * itself.
   */
  public static void warmUpRowPath(SortEngine engine, GpuSortConf conf) {
    if (conf.get(GpuSortConf.WARMUP_ROW_PATH)) {
      RowPathWarmup.start(engine, conf);
    }
  }

  /**
   * Waits until the preparation started here, the warm-ups included, is done: for tests that
   * count what is in use.
   */
  public static void await() throws InterruptedException {
    Thread start = thread;
    if (start != null) {
      start.join();
    }
    PlanningWarmup.await();
    Engines.awaitWarmups();
  }
}
