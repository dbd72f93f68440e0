package io.gpusort.examples;

import io.gpusort.compat.ScalaCollections;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import org.apache.spark.scheduler.AccumulableInfo;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.scheduler.TaskInfo;

/**
 * The tasks that ended since the last {@link #clear()}: run times, GC times, and for the
 * slowest and the median task where its time went.
 */
final class TaskCapture extends SparkListener {
  /** The GpuSort node's time metrics a task's line shows, by their names in the UI. */
  private static final String[][] STAGES = {{"input time (the child's)", "input"},
      {"intake time", "intake"}, {"engine sort time", "sort"}, {"GPU wait time", "gpuWait"},
      {"transfer from device time", "fromDev"}, {"output time", "output"},
      {"output's wait for the device time", "outWait"}};

  /**
   * launch and finish (ms), GC (s), deserialization (s), shuffle bytes written, bytes spilled to
   * disk, peak execution memory, then {@link #STAGES} (s).
   */
  private static final int FIRST_STAGE = 7;
  private final List<double[]> ended = Collections.synchronizedList(new ArrayList<>());

  @Override
  public void onTaskEnd(SparkListenerTaskEnd end) {
    TaskInfo info = end.taskInfo();
    double[] task = new double[FIRST_STAGE + STAGES.length];
    task[0] = info.launchTime();
    task[1] = info.finishTime();
    if (end.taskMetrics() != null) {
      task[2] = end.taskMetrics().jvmGCTime() / 1e3;
      task[3] = end.taskMetrics().executorDeserializeTime() / 1e3;
      task[4] = end.taskMetrics().shuffleWriteMetrics().bytesWritten();
      task[5] = end.taskMetrics().diskBytesSpilled();
      task[6] = end.taskMetrics().peakExecutionMemory();
    }
    for (AccumulableInfo acc : ScalaCollections.asJava(info.accumulables())) {
      if (acc.name().isEmpty() || acc.update().isEmpty()
          || !(acc.update().get() instanceof Number value)) {
        continue;
      }
      for (int s = 0; s < STAGES.length; s++) {
        if (STAGES[s][0].equals(acc.name().get())) {
          task[FIRST_STAGE + s] += value.doubleValue() / 1e9;
        }
      }
    }
    ended.add(task);
  }

  void clear() {
    ended.clear();
  }

  /**
   * Median and longest task time, summed GC time, shuffle bytes written (MB), bytes spilled to
   * disk (MB) and the largest peak execution memory of a task (MB) of the tasks since
   * {@link #clear()}.
   */
  double[] spans() {
    synchronized (ended) {
      double[] times = ended.stream().mapToDouble(t -> (t[1] - t[0]) / 1e3).sorted().toArray();
      double gc = ended.stream().mapToDouble(t -> t[2]).sum();
      double shuffled = ended.stream().mapToDouble(t -> t[4]).sum() / 1e6;
      double spilled = ended.stream().mapToDouble(t -> t[5]).sum() / 1e6;
      double peak = ended.stream().mapToDouble(t -> t[6]).max().orElse(0) / 1e6;
      if (times.length == 0) {
        return new double[] {0, 0, gc, shuffled, spilled, peak};
      }
      return new double[] {times[times.length / 2], times[times.length - 1], gc, shuffled,
          spilled, peak};
    }
  }

  /**
   * The median and the slowest task since {@link #clear()}: each its launch after the first
   * task's, run time, deserialization and the node's stage times (those it has).
   */
  String medianAndSlowest() {
    synchronized (ended) {
      if (ended.isEmpty()) {
        return "";
      }
      List<double[]> byTime = new ArrayList<>(ended);
      byTime.sort(Comparator.comparingDouble(t -> t[1] - t[0]));
      double first = byTime.stream().mapToDouble(t -> t[0]).min().orElse(0);
      return describe(byTime.get(byTime.size() / 2), first) + " | slowest "
          + describe(byTime.get(byTime.size() - 1), first);
    }
  }

  private static String describe(double[] task, double firstLaunch) {
    StringBuilder line = new StringBuilder(String.format(Locale.ROOT,
        "+%.3f run %.3f deser %.3f", (task[0] - firstLaunch) / 1e3, (task[1] - task[0]) / 1e3,
        task[3]));
    for (int s = 0; s < STAGES.length; s++) {
      if (task[FIRST_STAGE + s] > 0) {
        line.append(String.format(Locale.ROOT, " %s %.3f", STAGES[s][1], task[FIRST_STAGE + s]));
      }
    }
    return line.toString();
  }
}
