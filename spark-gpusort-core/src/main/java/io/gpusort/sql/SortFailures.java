package io.gpusort.sql;

import io.gpusort.config.GpuSortConf;
import io.gpusort.engine.EngineException;
import io.gpusort.engine.Engines.EngineUnavailableException;
import java.io.InterruptedIOException;
import java.nio.channels.ClosedByInterruptException;
import java.util.Iterator;
import java.util.function.Supplier;
import org.apache.spark.SparkThrowable;
import org.apache.spark.TaskContext;
import org.apache.spark.TaskKilledException;
import org.apache.spark.shuffle.FetchFailedException;

/**
 * The boundary between the plugin and a query: where a node plans its sort (driver) and where a
 * task's sort runs. A failure of the plugin's own code that crosses it becomes a {@link
 * GpuSortFailureException} whose message names the setting that gets the query going without the
 * part that failed (the engine, the replacement of Spark's sorts), the failure as its cause.
 *
 * <p>Everything else crosses unchanged, so that the user gets what Spark itself would give: errors
 * with an error class (Spark's, ANSI errors of a key's expression, a failed job), a failure of the
 * sort's input (thrown from the child's code, not the plugin's), a task's kill or interrupt and
 * what a kill caused, a shuffle's fetch failure (Spark recomputes the map side on its class), and
 * every {@link Error} (out of memory included, which Spark handles by its class).
 */
final class SortFailures {
  private static final String PLUGIN_PACKAGE = "io.gpusort.";
  private static final String CPU_ENGINE_PACKAGE = "io.gpusort.engine.cpu.";
  /** What turns the replacement of Spark's sorts off, and the API's own way round it. */
  static final String WITHOUT_PLUGIN = "set " + GpuSortConf.SQL_ENABLED.key() + "=false to run "
      + "Spark's own sorts instead (for GpuSort.byKey or GpuSort.withinPartitions, call "
      + "Dataset.orderBy or Dataset.sortWithinPartitions)";
  /** What keeps the GPUs out of the sort. */
  static final String ON_CPU = "set " + GpuSortConf.ENGINE.key() + "=cpu to sort on the CPU "
      + "engine";

  private SortFailures() {}

  /** Runs {@code step} (a node's planning, a task's start), its own failures named. */
  static <T> T guard(Supplier<T> step) {
    try {
      return step.get();
    } catch (RuntimeException e) {
      throw named(e);
    }
  }

  /** Starts {@code sort} (a task's sort), its own failures named, then and as it is read. */
  static <T> Iterator<T> guardIterator(Supplier<Iterator<T>> sort) {
    return new Guarded<>(guard(sort));
  }

  /**
   * {@code e} as it should reach the user: the plugin's own failure wrapped in one that names the
   * setting to turn off, anything else (see the class) as it is.
   */
  static RuntimeException named(RuntimeException e) {
    if (!isPluginsOwn(e)) {
      return e;
    }
    return new GpuSortFailureException("GpuSort failed: " + e + ". To get going, "
        + (onGpuEngine(e) ? ON_CPU + ", or " : "") + WITHOUT_PLUGIN + ".", e);
  }

  /** Whether {@code e} is the plugin's own failure, not Spark's, the input's or a kill's. */
  static boolean isPluginsOwn(RuntimeException e) {
    if (e instanceof GpuSortFailureException) {
      return false;
    }
    // A failure while the task is being killed is the kill's doing, whatever threw it.
    TaskContext task = TaskContext.get();
    if (task != null && task.isInterrupted()) {
      return false;
    }
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof SparkThrowable || t instanceof TaskKilledException
          || t instanceof InterruptedException || t instanceof InterruptedIOException
          || t instanceof ClosedByInterruptException || t instanceof FetchFailedException) {
        return false;
      }
      if (t.getCause() == t) {
        break;
      }
    }
    String thrower = throwingClass(e);
    return thrower != null && thrower.startsWith(PLUGIN_PACKAGE);
  }

  /**
   * The class whose code threw {@code e}: the top frame outside the JDK and the Scala library,
   * whose collections and helpers the plugin and the input both call; null where there is none.
   */
  private static String throwingClass(Throwable e) {
    for (StackTraceElement frame : e.getStackTrace()) {
      String name = frame.getClassName();
      if (!name.startsWith("java.") && !name.startsWith("javax.") && !name.startsWith("jdk.")
          && !name.startsWith("sun.") && !name.startsWith("scala.")) {
        return name;
      }
    }
    return null;
  }

  /**
   * Whether a GPU engine is part of {@code e}: an engine's failure that did not come from the CPU
   * engine (a GPU engine's, or the CPU engine's after a GPU engine failed first and is attached),
   * or a demanded engine that is not there.
   */
  private static boolean onGpuEngine(Throwable e) {
    for (Throwable t = e; t != null && t.getCause() != t; t = t.getCause()) {
      if (t instanceof EngineUnavailableException) {
        return true;
      }
      if (t instanceof EngineException) {
        String thrower = throwingClass(t);
        if (thrower == null || !thrower.startsWith(CPU_ENGINE_PACKAGE)) {
          return true;
        }
      }
      for (Throwable s : t.getSuppressed()) {
        if (s instanceof EngineException || s instanceof EngineUnavailableException) {
          return true;
        }
      }
    }
    return false;
  }

  /** An iterator whose failures cross the boundary named. */
  private static final class Guarded<T> implements Iterator<T> {
    private final Iterator<T> in;

    Guarded(Iterator<T> in) {
      this.in = in;
    }

    @Override
    public boolean hasNext() {
      try {
        return in.hasNext();
      } catch (RuntimeException e) {
        throw named(e);
      }
    }

    @Override
    public T next() {
      try {
        return in.next();
      } catch (RuntimeException e) {
        throw named(e);
      }
    }
  }
}
