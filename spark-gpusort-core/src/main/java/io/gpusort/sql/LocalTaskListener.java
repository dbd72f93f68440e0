package io.gpusort.sql;

import io.gpusort.memory.RunningTasks;
import java.util.Collections;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.spark.SparkContext;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerStageCompleted;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.scheduler.SparkListenerTaskStart;

/**
 * In a local session without the plugin's executor side, tells {@link RunningTasks} which tasks
 * run (the tasks run in this JVM), from the driver's task events: the page-locked arena pins
 * between them. A stage's completion ends any of its tasks whose end event was dropped, so that a
 * full listener queue cannot stop the pinning for good.
 */
final class LocalTaskListener extends SparkListener {
  private static final Set<SparkContext> LISTENED =
      Collections.synchronizedSet(Collections.newSetFromMap(new WeakHashMap<>()));
  /** Running task attempt ids by stage id. */
  private final Map<Integer, Set<Long>> running = new ConcurrentHashMap<>();

  /** Adds a listener to {@code context} unless one was added already. */
  static void listenTo(SparkContext context) {
    if (LISTENED.add(context)) {
      context.addSparkListener(new LocalTaskListener());
    }
  }

  @Override
  public void onTaskStart(SparkListenerTaskStart event) {
    long taskId = event.taskInfo().taskId();
    running.computeIfAbsent(event.stageId(), s -> ConcurrentHashMap.newKeySet()).add(taskId);
    RunningTasks.started(taskId);
  }

  @Override
  public void onTaskEnd(SparkListenerTaskEnd event) {
    long taskId = event.taskInfo().taskId();
    Set<Long> stage = running.get(event.stageId());
    if (stage != null) {
      stage.remove(taskId);
    }
    RunningTasks.ended(taskId);
  }

  @Override
  public void onStageCompleted(SparkListenerStageCompleted event) {
    Set<Long> left = running.remove(event.stageInfo().stageId());
    if (left != null) {
      left.forEach(RunningTasks::ended);
    }
  }
}
