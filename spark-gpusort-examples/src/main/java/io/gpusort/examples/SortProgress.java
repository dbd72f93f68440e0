package io.gpusort.examples;

import io.gpusort.compat.ScalaCollections;
import java.io.PrintStream;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.spark.SparkContext;
import org.apache.spark.Success$;
import org.apache.spark.executor.TaskMetrics;
import org.apache.spark.scheduler.AccumulableInfo;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerExecutorMetricsUpdate;
import org.apache.spark.scheduler.SparkListenerStageCompleted;
import org.apache.spark.scheduler.SparkListenerStageSubmitted;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.scheduler.SparkListenerTaskStart;
import org.apache.spark.scheduler.StageInfo;
import scala.Tuple4;

/**
 * Progress lines of a long FileSort run, printed every interval from a thread of their own:
 * rows read, sorted and written so far, the rate and an estimate of the time left, one line at a
 * time (no carriage returns, so a log or a pipe keeps every line). The counts are summed, as a
 * {@link SparkListener}, from the task metrics of finished tasks and from the metrics running
 * tasks report with their executor's heartbeats ({@code spark.executor.heartbeatInterval}, 10 s
 * by default), so a long task's rows show before it ends. Every task of the context counts while
 * the listener is registered: FileSort runs one job at a time in its session.
 *
 * <ul>
 *   <li><b>read</b>: input records of the tasks of shuffle-map stages, the sort's map side. The
 *       sampling job that picks the range bounds reads the input too, in a result stage, and is
 *       not counted: its time shows as time with nothing read yet.
 *   <li><b>sorted</b>: input records of map tasks that have finished, whose rows have been
 *       sorted and handed to the shuffle.
 *   <li><b>written</b>: output records of every task (the sort's last stage, or the generator):
 *       where a task counts its records in the accumulator {@link TeraFiles#RECORDS_WRITTEN} (the
 *       terasort writer, whose output records are blocks of records), that count.
 * </ul>
 *
 * <p>The estimate: a sort is taken as half reading (and sorting) and half writing, each half's
 * share done being its rows over the expected rows ({@link Work}); for input whose row count is
 * not known beforehand the read share is the input bytes read over the input's size, and the row
 * count is extrapolated from it until the map side ends, when it is known. Rate and time left
 * follow from the share done and the time since the start: a rough guide, which ignores the
 * sampling pass and any imbalance between the halves.
 */
final class SortProgress extends SparkListener implements AutoCloseable {
  /** Spark's names of the task metrics a heartbeat reports for a running task. */
  private static final String RECORDS_READ = "internal.metrics.input.recordsRead";
  private static final String BYTES_READ = "internal.metrics.input.bytesRead";
  private static final String RECORDS_WRITTEN = "internal.metrics.output.recordsWritten";

  /**
   * What the job does, for the estimate.
   *
   * @param sorts whether it reads and sorts before it writes (else it only writes)
   * @param expectedRows rows it will read or write, or 0 if unknown
   * @param inputBytes bytes of its input files, or 0 if unknown or none
   */
  record Work(boolean sorts, long expectedRows, long inputBytes) {
    static Work sort(long expectedRows, long inputBytes) {
      return new Work(true, expectedRows, inputBytes);
    }

    static Work generate(long rows) {
      return new Work(false, rows, 0);
    }
  }

  /** Counts so far: map-side records and bytes read, rows sorted and written, map side done. */
  record Counts(long read, long bytesRead, long sorted, long written, boolean mapSideDone) {}

  private final SparkContext sc;
  private final PrintStream out;
  private final Work work;
  private final long startNanos = System.nanoTime();
  private final ScheduledExecutorService printer;

  // Guarded by this: the listener bus's thread writes them, the printer's thread reads them.
  private final Set<Integer> mapStages = new HashSet<>();
  private final Set<Integer> mapStagesDone = new HashSet<>();
  /** Running tasks: stage, then read, bytes read and written as last reported. */
  private final Map<Long, long[]> running = new HashMap<>();
  private long finishedRead;
  private long finishedBytesRead;
  private long finishedWritten;

  private SortProgress(SparkContext sc, PrintStream out, Work work, long intervalMillis) {
    this.sc = sc;
    this.out = out;
    this.work = work;
    if (intervalMillis <= 0) {
      printer = null;
      return;
    }
    printer = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "FileSort progress");
      t.setDaemon(true);
      return t;
    });
    sc.addSparkListener(this);
    printer.scheduleAtFixedRate(this::print, intervalMillis, intervalMillis,
        TimeUnit.MILLISECONDS);
  }

  /**
   * Starts printing progress of {@code work} to {@code out} every {@code intervalMillis}; with
   * an interval of 0 or less, prints nothing and listens to nothing. Close it when the job ends
   * (before printing its summary, so no progress line follows that).
   */
  static SortProgress start(SparkContext sc, PrintStream out, Work work, long intervalMillis) {
    return new SortProgress(sc, out, work, intervalMillis);
  }

  @Override
  public synchronized void onStageSubmitted(SparkListenerStageSubmitted submitted) {
    StageInfo stage = submitted.stageInfo();
    if (stage.shuffleDepId().isDefined()) {
      mapStages.add(stage.stageId());
    }
  }

  @Override
  public synchronized void onStageCompleted(SparkListenerStageCompleted completed) {
    StageInfo stage = completed.stageInfo();
    if (mapStages.contains(stage.stageId()) && stage.failureReason().isEmpty()) {
      mapStagesDone.add(stage.stageId());
    }
  }

  @Override
  public synchronized void onTaskStart(SparkListenerTaskStart start) {
    // Stage, records read, bytes read, written, and 1 once the task counts its own records.
    running.put(start.taskInfo().taskId(), new long[] {start.stageId(), 0, 0, 0, 0});
  }

  @Override
  public synchronized void onTaskEnd(SparkListenerTaskEnd end) {
    running.remove(end.taskInfo().taskId());
    TaskMetrics metrics = end.taskMetrics();
    // A failed attempt's rows are read again by its retry.
    if (metrics == null || !Success$.MODULE$.equals(end.reason())) {
      return;
    }
    if (mapStages.contains(end.stageId())) {
      finishedRead += metrics.inputMetrics().recordsRead();
      finishedBytesRead += metrics.inputMetrics().bytesRead();
    }
    Long counted = countedRecords(ScalaCollections.asJava(end.taskInfo().accumulables()));
    finishedWritten += counted != null ? counted : metrics.outputMetrics().recordsWritten();
  }

  /** What {@link TeraFiles#RECORDS_WRITTEN} holds among {@code updates}; null if absent. */
  private static Long countedRecords(Iterable<AccumulableInfo> updates) {
    for (AccumulableInfo info : updates) {
      if (info.name().isDefined() && info.name().get().equals(TeraFiles.RECORDS_WRITTEN)
          && info.update().isDefined() && info.update().get() instanceof Long value) {
        return value;
      }
    }
    return null;
  }

  @Override
  public synchronized void onExecutorMetricsUpdate(SparkListenerExecutorMetricsUpdate update) {
    // A Scala Seq of (task id, stage, attempt, updates); updates are a collection.Seq on Scala
    // 2.12 and an immutable one on 2.13, hence the wildcard.
    for (Tuple4<Object, Object, Object, ? extends scala.collection.Seq<AccumulableInfo>> task
        : ScalaCollections.asJava(update.accumUpdates())) {
      // Only tasks known to be running: a heartbeat can arrive after its task's end.
      long[] counts = running.get((Long) task._1());
      if (counts == null) {
        continue;
      }
      for (AccumulableInfo info : ScalaCollections.asJava(task._4())) {
        if (info.name().isEmpty() || info.update().isEmpty()
            || !(info.update().get() instanceof Long value)) {
          continue;
        }
        switch (info.name().get()) {
          case RECORDS_READ -> counts[1] = value;
          case BYTES_READ -> counts[2] = value;
          case RECORDS_WRITTEN -> counts[3] = counts[4] == 1 ? counts[3] : value;
          case TeraFiles.RECORDS_WRITTEN -> {
            counts[3] = value;
            counts[4] = 1;
          }
          default -> { }
        }
      }
    }
  }

  /** The counts now: finished tasks' totals plus what running tasks last reported. */
  synchronized Counts counts() {
    long read = finishedRead;
    long bytesRead = finishedBytesRead;
    long written = finishedWritten;
    for (long[] task : running.values()) {
      if (mapStages.contains((int) task[0])) {
        read += task[1];
        bytesRead += task[2];
      }
      written += task[3];
    }
    boolean mapSideDone = !mapStages.isEmpty() && mapStagesDone.containsAll(mapStages);
    return new Counts(read, bytesRead, finishedRead, written, mapSideDone);
  }

  private void print() {
    out.println("FileSort: progress " + describe(work, counts(), System.nanoTime() - startNanos));
  }

  /**
   * One progress line's text (after {@code "FileSort: progress "}) for {@code counts} of
   * {@code work} after {@code elapsedNanos}, such as {@code 0:01:20 read 4,000,000 of
   * 10,000,000 rows, sorted 3,000,000, written 0 (20%); 100,000 rows/s; about 0:05:20 left}.
   */
  static String describe(Work work, Counts counts, long elapsedNanos) {
    double readShare = readShare(work, counts);
    long totalRows = totalRows(work, counts, readShare);
    double writtenShare = totalRows > 0 ? Math.min(1, (double) counts.written() / totalRows)
        : counts.written() == 0 ? 0 : Double.NaN;
    double done = work.sorts() ? (readShare + writtenShare) / 2 : writtenShare;

    StringBuilder line = new StringBuilder(clock(elapsedNanos)).append(' ');
    String of = totalRows > 0 ? String.format(Locale.ROOT, " of %,d", totalRows) : "";
    if (work.sorts()) {
      line.append(String.format(Locale.ROOT, "read %,d%s rows, sorted %,d, written %,d",
          counts.read(), of, counts.sorted(), counts.written()));
    } else {
      line.append(String.format(Locale.ROOT, "written %,d%s rows", counts.written(), of));
    }
    double seconds = elapsedNanos / 1e9;
    if (Double.isNaN(done) || totalRows <= 0 || done <= 0 || seconds <= 0) {
      return line.append("; estimating the time left").toString();
    }
    long leftNanos = (long) (elapsedNanos * (1 - done) / done);
    return line.append(String.format(Locale.ROOT, " (%d%%); %,d rows/s; about %s left",
        (long) Math.floor(done * 100), Math.round(done * totalRows / seconds),
        clock(leftNanos))).toString();
  }

  /** The map side's share done, 0 to 1, or NaN when nothing says. */
  private static double readShare(Work work, Counts counts) {
    if (counts.mapSideDone()) {
      return 1;
    }
    if (work.expectedRows() > 0) {
      return Math.min(1, (double) counts.read() / work.expectedRows());
    }
    if (work.inputBytes() > 0) {
      return Math.min(1, (double) counts.bytesRead() / work.inputBytes());
    }
    return Double.NaN;
  }

  /** The rows expected, known or extrapolated from the share read; 0 if there is no telling. */
  private static long totalRows(Work work, Counts counts, double readShare) {
    if (work.expectedRows() > 0) {
      return work.expectedRows();
    }
    if (counts.mapSideDone()) {
      return counts.read();
    }
    return readShare > 0 ? Math.round(counts.read() / readShare) : 0;
  }

  /** {@code h:mm:ss}. */
  static String clock(long nanos) {
    long seconds = Math.max(0, nanos) / 1_000_000_000L;
    return String.format(Locale.ROOT, "%d:%02d:%02d", seconds / 3600, seconds / 60 % 60,
        seconds % 60);
  }

  /** Stops printing and listening; idempotent. */
  @Override
  public void close() {
    if (printer == null || printer.isShutdown()) {
      return;
    }
    printer.shutdownNow();
    try {
      // A line being printed finishes before the caller prints its summary.
      printer.awaitTermination(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    sc.removeSparkListener(this);
  }
}
