package io.gpusort.sql;

import io.gpusort.engine.EngineException;
import io.gpusort.engine.EngineOptions;
import io.gpusort.engine.EngineStats;
import io.gpusort.engine.EngineTimes;
import io.gpusort.engine.Engines;
import io.gpusort.engine.KeyBatch;
import io.gpusort.engine.RowArrival;
import io.gpusort.engine.RowPages;
import io.gpusort.engine.RowUpload;
import io.gpusort.engine.SortEngine;
import io.gpusort.memory.HostBuffer;
import java.util.function.Function;
import org.apache.spark.TaskContext;
import org.apache.spark.resource.ResourceInformation;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The device stage of the row path: one engine call per run, from encoded keys to a permutation,
 * then, on an engine with a device, a second that puts the rows themselves in that order there. A
 * GPU engine that fails costs the run nothing but time: it is sorted on the CPU engine instead, and
 * rows it could not gather are read through the permutation. A killed task starts no engine call,
 * and a call that failed because the task was killed is not retried on the CPU. Each call's
 * stages (transfers, sort, gather) go to the node's metrics.
 */
final class EngineStage {
  private static final Logger LOG = LoggerFactory.getLogger(EngineStage.class);

  private final SortPlan plan;
  /** The engine for given options; {@link Engines#create} but in tests. */
  private final Function<EngineOptions, SortEngine> engines;
  private final Runnable killCheck;

  EngineStage(SortPlan plan, Function<EngineOptions, SortEngine> engines, Runnable killCheck) {
    this.plan = plan;
    this.engines = engines;
    this.killCheck = killCheck;
  }

  /** Whether the engine sorts on a GPU (false where it cannot be had: the CPU engine sorts). */
  boolean sortsOnGpu() {
    try {
      return EngineStats.isGpu(engine());
    } catch (RuntimeException e) {
      return false;
    }
  }

  /** Writes the stable sorted order of {@code keys} into {@code permutation}. */
  void sort(KeyBatch keys, HostBuffer permutation) {
    sortOnEngine(keys, permutation, engine -> engine.sort(keys, permutation));
  }

  /**
   * As {@link #sort}, the keys being sorted runs starting at {@code runStarts}
   * ({@link SortEngine#sortRuns}): a GPU engine merges them.
   */
  void sortRuns(KeyBatch keys, int[] runStarts, HostBuffer permutation) {
    sortOnEngine(keys, permutation, engine -> engine.sortRuns(keys, runStarts, permutation));
  }

  /** Runs {@code call} on the task's engine, the CPU engine's sort where a GPU engine fails. */
  private void sortOnEngine(KeyBatch keys, HostBuffer permutation,
      java.util.function.Consumer<SortEngine> call) {
    killCheck.run();
    SortEngine engine = engine();
    EngineTimes before = EngineTimes.ofThread().snapshot();
    long start = System.nanoTime();
    try {
      call.accept(engine);
      recordCall(engine, keys);
      recordTimes(engine, before, System.nanoTime() - start);
    } catch (EngineException e) {
      // An engine interrupted by a kill fails too: the kill wins over the fallback.
      killCheck.run();
      SortEngine cpu = Engines.cpu();
      if (engine == cpu) {
        throw e;
      }
      LOG.warn("The {} engine failed on {} rows; sorting them on the CPU engine", engine.name(),
          keys.numRows(), e);
      start = System.nanoTime();
      try {
        cpu.sort(keys, permutation);
      } catch (RuntimeException | Error fallbackFailure) {
        // The user sees both: the GPU engine's failure is why the CPU engine ran.
        fallbackFailure.addSuppressed(e);
        throw fallbackFailure;
      }
      SortMetrics.add(plan.metrics.engineFallbacks, 1);
      EngineStats.recordFallback();
      recordCall(cpu, keys);
      recordTimes(cpu, EngineTimes.ofThread().snapshot(), System.nanoTime() - start);
    }
  }

  /**
   * A channel that sends a run's pages to the engine's device while the run is taken in, or null
   * where the engine has no device, {@code spark.gpusort.gather.uploadAhead} is off, or it could
   * not be opened (the gather then sends every page).
   */
  RowUpload openRowUpload() {
    if (!plan.uploadAhead) {
      return null;
    }
    try {
      SortEngine engine = engine();
      return engine.gathersRowsOnDevice() ? engine.openRowUpload() : null;
    } catch (RuntimeException e) {
      LOG.debug("No row upload ahead of the sort", e);
      return null;
    }
  }

  /**
   * Puts {@code rows} in {@code permutation} order on the engine's device, the pages in
   * {@code uploaded} (may be null) already sent; returns the sorted stream as it comes back (at
   * once, with {@code spark.gpusort.gather.streamOutput} off), or null, with the rows unchanged,
   * where the engine has no device, the rows do not fit it, or it failed (the rows are then read
   * through the permutation).
   */
  RowArrival gatherRows(RowPages rows, HostBuffer permutation, RowUpload uploaded) {
    SortEngine engine = engine();
    if (!engine.gathersRowsOnDevice() || rows.numRows() < 2) {
      return null;
    }
    killCheck.run();
    EngineTimes before = EngineTimes.ofThread().snapshot();
    RowArrival arrival;
    try {
      arrival = engine.gatherRows(rows, permutation, uploaded);
    } catch (EngineException e) {
      killCheck.run();
      LOG.warn("The {} engine failed to gather {} rows; reading them through the permutation",
          engine.name(), rows.numRows(), e);
      SortMetrics.add(plan.metrics.engineFallbacks, 1);
      EngineStats.recordFallback();
      return null;
    }
    if (arrival == null) {
      return null;
    }
    recordTimes(engine, before, 0);
    SortMetrics.add(plan.metrics.rowsGatheredOnDevice, rows.numRows());
    SortMetrics.add(plan.metrics.bytesToDevice, rows.recordBytes() + 12L * rows.numRows());
    SortMetrics.add(plan.metrics.bytesFromDevice, rows.recordBytes());
    RowArrival timed = new TimedArrival(arrival, plan.metrics);
    if (!plan.streamOutput) {
      timed.close();
      return RowArrival.DONE;
    }
    return timed;
  }

  /** An arriving stream that reports its copies' device time when closed. */
  private static final class TimedArrival implements RowArrival {
    private final RowArrival arrival;
    private final SortMetrics metrics;
    private boolean closed;

    TimedArrival(RowArrival arrival, SortMetrics metrics) {
      this.arrival = arrival;
      this.metrics = metrics;
    }

    @Override
    public void await(long bytes) {
      arrival.await(bytes);
    }

    @Override
    public void poll() {
      arrival.poll();
    }

    @Override
    public void close() {
      if (!closed) {
        closed = true;
        arrival.close();
        SortMetrics.add(metrics.fromDeviceTime, arrival.fromDeviceNanos());
      }
    }
  }

  private SortEngine engine() {
    return engines.apply(plan.engineOptions.withCudaDevice(taskGpu()));
  }

  /**
   * The stage times of one call: a GPU engine's own measures since {@code before}; for the CPU
   * engine, the call's {@code wallNanos} as sort time.
   */
  private void recordTimes(SortEngine engine, EngineTimes before, long wallNanos) {
    EngineTimes now = EngineTimes.ofThread();
    SortMetrics m = plan.metrics;
    if (EngineStats.isGpu(engine)) {
      SortMetrics.add(m.toDeviceTime, now.toDeviceNanos - before.toDeviceNanos);
      SortMetrics.add(m.deviceSortTime, now.sortNanos - before.sortNanos);
      SortMetrics.add(m.gatherTime, now.gatherNanos - before.gatherNanos);
      SortMetrics.add(m.fromDeviceTime, now.fromDeviceNanos - before.fromDeviceNanos);
      SortMetrics.add(m.gpuWaitTime, now.waitNanos - before.waitNanos);
    } else {
      SortMetrics.add(m.deviceSortTime, wallNanos);
    }
  }

  /** The SQL node's and the process's counts of one engine call. */
  private void recordCall(SortEngine engine, KeyBatch keys) {
    long rows = keys.numRows();
    long keyBytes = 8L * rows * keys.numWords();
    SortMetrics.add(plan.metrics.engineChunks, 1);
    SortMetrics.add(plan.metrics.rowsOn(engine.name()), rows);
    if (EngineStats.isGpu(engine)) {
      SortMetrics.add(plan.metrics.bytesToDevice, keyBytes);
      SortMetrics.add(plan.metrics.bytesFromDevice, 4L * rows);
    }
    EngineStats.recordCall(engine, 1, rows, keyBytes);
  }

  /**
   * The CUDA device of this task: the first GPU address Spark assigned it (spark.task.resource.gpu
   * .amount), else the configured device.
   */
  private int taskGpu() {
    TaskContext task = TaskContext.get();
    if (task != null) {
      scala.Option<ResourceInformation> assigned = task.resources().get("gpu");
      ResourceInformation gpu = assigned.isDefined() ? assigned.get() : null;
      if (gpu != null && gpu.addresses().length > 0) {
        try {
          return Integer.parseInt(gpu.addresses()[0].trim());
        } catch (NumberFormatException e) {
          LOG.warn("GPU address {} is not a device ordinal; using the configured device",
              gpu.addresses()[0]);
        }
      }
    }
    return plan.engineOptions.cudaDevice();
  }
}
