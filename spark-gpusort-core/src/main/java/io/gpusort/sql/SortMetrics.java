package io.gpusort.sql;

import java.io.Serializable;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.spark.SparkContext;
import org.apache.spark.sql.execution.metric.SQLMetric;
import org.apache.spark.sql.execution.metric.SQLMetrics;

/**
 * The sort node's SQL metrics (shown in the Spark UI's SQL tab), updated by the tasks. A plan
 * built outside a query (in unit tests) uses {@link #NONE}, whose updates go nowhere; the row
 * path's warm-up uses {@link #unregistered()}.
 */
final class SortMetrics implements Serializable {
  private static final long serialVersionUID = 1L;

  static final SortMetrics NONE = new SortMetrics(null, false);

  /** Rows the node sorted and returned. */
  final SQLMetric outputRows;
  /** Time in the sort proper: engine calls, tie-breaks and merges of spilled runs. */
  final SQLMetric sortTimeNanos;
  /** Engine calls, one per run of at most {@code spark.gpusort.chunk.maxBytes}. */
  final SQLMetric engineChunks;
  /** Rows whose truncated keys tied and were ordered exactly on the host. */
  final SQLMetric tieBrokenRows;
  /** Partitions a GPU engine failed on that were sorted on the CPU engine instead. */
  final SQLMetric engineFallbacks;
  /** Key bytes sent to a GPU engine's device, and row indices (4 bytes a row) back from it. */
  final SQLMetric bytesToDevice;
  final SQLMetric bytesFromDevice;
  /** Rows sorted on each engine: which engine the tasks got shows here. */
  final SQLMetric cpuRows;
  final SQLMetric cudaRows;
  final SQLMetric vulkanRows;
  /** Bytes of memory freed by spilling (rows, keys and index), as Spark's sort reports it. */
  final SQLMetric spillSize;
  /** Times a task's sort wrote its runs to disk. */
  final SQLMetric numSpills;
  /** The most task memory one sort held (also added to its task's peakExecutionMemory). */
  final SQLMetric peakMemory;
  /** Rows taken in straight from columnar batches (no row conversion above the scan). */
  final SQLMetric columnarRows;
  /** Rows put in sorted order on a device, read front to back by the output. */
  final SQLMetric rowsGatheredOnDevice;
  /**
   * Stage times, summed over tasks. Intake: the node's own part of taking rows in (copying them
   * into pages, encoding their keys, taking pages and sending them ahead), without the child's
   * time ({@link #inputTime}) or the seals it caused (the sort time).
   */
  final SQLMetric intakeTime;
  /**
   * The child making what the intake takes (the scan), outside the node: each columnar batch
   * timed; rows estimated from a sample of them ({@link SampledTimer}), since timing each row
   * would cost more than the row.
   */
  final SQLMetric inputTime;
  /** Waiting for a turn on a GPU (its bound on tasks at once, {@code cuda.concurrentTasks}). */
  final SQLMetric gpuWaitTime;
  /** Keys, rows and permutations copied to a device (device clock). */
  final SQLMetric toDeviceTime;
  /** The key sort: on a device, its kernels; on the CPU engine, the whole call. */
  final SQLMetric deviceSortTime;
  /** Rows put in sorted order on the device (device clock). */
  final SQLMetric gatherTime;
  /** Permutations and sorted rows copied back from the device (device clock). */
  final SQLMetric fromDeviceTime;
  /**
   * Reading the sorted rows out: walking ordered runs, reading rows through the permutation,
   * merging runs and reading spilled ones, waiting for sorted rows to be back from a device; not
   * the time of the operators above that consume them.
   */
  final SQLMetric outputTime;
  /**
   * The part of {@link #outputTime} the output spent waiting for sorted rows to be back from a
   * device: copies still under way, or queued behind other tasks' work on it.
   */
  final SQLMetric outputWaitTime;

  /**
   * Metrics registered with {@code sc}; with none, metrics counted but shown nowhere where {@code
   * live}, else none (null).
   */
  private SortMetrics(SparkContext sc, boolean live) {
    Metrics m = new Metrics(sc, live);
    this.outputRows = m.sum("number of output rows");
    this.sortTimeNanos = m.timing("sort time");
    this.engineChunks = m.sum("engine calls (chunks)");
    this.tieBrokenRows = m.sum("rows ordered by host tie-break");
    this.engineFallbacks = m.sum("engine fallbacks to cpu");
    this.bytesToDevice = m.size("bytes to device");
    this.bytesFromDevice = m.size("bytes from device");
    this.cpuRows = m.sum("rows sorted on cpu");
    this.cudaRows = m.sum("rows sorted on cuda");
    this.vulkanRows = m.sum("rows sorted on vulkan");
    this.spillSize = m.size("spill size");
    this.numSpills = m.sum("number of spills");
    this.peakMemory = m.size("peak memory");
    this.rowsGatheredOnDevice = m.sum("rows put in order on device");
    this.columnarRows = m.sum("rows taken in from columnar batches");
    this.intakeTime = m.timing("intake time");
    this.inputTime = m.timing("input time (the child's)");
    this.gpuWaitTime = m.timing("GPU wait time");
    this.toDeviceTime = m.timing("transfer to device time");
    this.deviceSortTime = m.timing("engine sort time");
    this.gatherTime = m.timing("row gather time");
    this.fromDeviceTime = m.timing("transfer from device time");
    this.outputTime = m.timing("output time");
    this.outputWaitTime = m.timing("output's wait for the device time");
  }

  /** Makes each metric as {@link SQLMetrics} does, registered with a context where there is one. */
  private record Metrics(SparkContext sc, boolean live) {
    SQLMetric sum(String name) {
      return sc != null ? SQLMetrics.createMetric(sc, name) : live ? new SQLMetric("sum", 0) : null;
    }

    SQLMetric size(String name) {
      return sc != null ? SQLMetrics.createSizeMetric(sc, name, -1)
          : live ? new SQLMetric("size", -1) : null;
    }

    SQLMetric timing(String name) {
      return sc != null ? SQLMetrics.createNanoTimingMetric(sc, name, -1)
          : live ? new SQLMetric("nsTiming", -1) : null;
    }
  }

  static SortMetrics create(SparkContext sc) {
    return new SortMetrics(sc, false);
  }

  /**
   * Metrics that count but are registered nowhere, so shown nowhere: a sort outside any query that
   * runs the tasks' code and should take the same branches (the row path's warm-up: with {@link
   * #NONE}, the JIT compiled every update as skipped, then recompiled the intake inside the first
   * query, whose updates are not).
   */
  static SortMetrics unregistered() {
    return new SortMetrics(null, true);
  }

  /** The metrics by key, for {@code SparkPlan.metrics}. */
  Map<String, SQLMetric> byKey() {
    Map<String, SQLMetric> map = new LinkedHashMap<>();
    if (outputRows != null) {
      map.put("numOutputRows", outputRows);
      map.put("sortTime", sortTimeNanos);
      map.put("engineChunks", engineChunks);
      map.put("tieBrokenRows", tieBrokenRows);
      map.put("engineFallbacks", engineFallbacks);
      map.put("bytesToDevice", bytesToDevice);
      map.put("bytesFromDevice", bytesFromDevice);
      map.put("cpuRows", cpuRows);
      map.put("cudaRows", cudaRows);
      map.put("vulkanRows", vulkanRows);
      map.put("spillSize", spillSize);
      map.put("numSpills", numSpills);
      map.put("peakMemory", peakMemory);
      map.put("rowsGatheredOnDevice", rowsGatheredOnDevice);
      map.put("columnarRows", columnarRows);
      map.put("inputTime", inputTime);
      map.put("intakeTime", intakeTime);
      map.put("gpuWaitTime", gpuWaitTime);
      map.put("toDeviceTime", toDeviceTime);
      map.put("deviceSortTime", deviceSortTime);
      map.put("gatherTime", gatherTime);
      map.put("fromDeviceTime", fromDeviceTime);
      map.put("outputTime", outputTime);
      map.put("outputWaitTime", outputWaitTime);
    }
    return map;
  }

  /** The rows-per-engine metric of the engine named {@code engine}. */
  SQLMetric rowsOn(String engine) {
    return switch (engine) {
      case "cuda" -> cudaRows;
      case "vulkan" -> vulkanRows;
      default -> cpuRows;
    };
  }

  static void add(SQLMetric metric, long value) {
    if (metric != null) {
      metric.add(value);
    }
  }
}
