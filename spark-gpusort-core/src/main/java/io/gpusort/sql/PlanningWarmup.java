package io.gpusort.sql;

import static org.apache.spark.sql.functions.col;

import io.gpusort.config.GpuSortConf;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import org.apache.spark.SparkEnv;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.sources.DataSourceRegister;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The driver's share of a first query, done ahead on a background thread once per JVM: a
 * session's first sort otherwise plans in code no thread has run yet, and the driver's main
 * thread loads several hundred classes (the analyzer's, the optimizer's, the planner's, ours)
 * between the query's start and its first task: on the GPU hosts 0.42-0.46 s of a first run
 * whose steady runs start their tasks after 0.02 s (benchmark notes, tenth session).
 *
 * <p>It plans, without running, the sorts the plugin serves on a few rows of its own (a numeric,
 * a string and a floating-point key): {@code GpuSort.withinPartitions} and {@code byKey}, and,
 * where the SQL extension is on, Spark's {@code sortWithinPartitions} and {@code orderBy}, which
 * the extension replaces. It runs in a session of its own ({@code newSession()}: the same
 * context, its own settings and views), so the user's session sees nothing of it, and no job
 * starts: no task, no entry in the UI. It also looks up Spark's registered data sources once,
 * which the first read or write of a file, a table or the {@code noop} sink in the JVM
 * otherwise does on the main thread (every registered source is loaded to find the one named).
 * Failures are only logged: a query then plans as it would have without it.
 */
final class PlanningWarmup {
  private static final Logger LOG = LoggerFactory.getLogger(PlanningWarmup.class);
  private static final AtomicBoolean STARTED = new AtomicBoolean();
  /** Rounds of planning: the second and third run on what the first loaded and initialised. */
  private static final int ROUNDS = 3;
  private static final long WARMUP_ROWS = 1024;
  /** The executor id Spark gives the driver (SparkContext.DRIVER_IDENTIFIER). */
  private static final String DRIVER_ID = "driver";
  private static volatile Thread thread;

  private PlanningWarmup() {}

  /**
   * Starts the warm-up for {@code session}'s context unless {@code settings} (spark.gpusort.*)
   * turn it off; once per JVM and on the driver only (a session some code makes on an executor
   * plans no query there), later calls return at once. Returns whether this call started it.
   */
  static boolean start(SparkSession session, Map<String, String> settings) {
    if (STARTED.get()) {
      return false; // every session and every GpuSort.byKey call after the first: nothing to do
    }
    SparkEnv env = SparkEnv.get();
    boolean driver = env == null || DRIVER_ID.equals(env.executorId());
    if (!driver || !GpuSortConf.of(settings).get(GpuSortConf.WARMUP_PLANNING)
        || STARTED.getAndSet(true)) {
      return false;
    }
    Thread start = new Thread(() -> run(session), "gpusort-planning-warmup");
    start.setDaemon(true);
    thread = start;
    start.start();
    return true;
  }

  /** Waits until the warm-up started here is done: for tests. */
  static void await() throws InterruptedException {
    Thread start = thread;
    if (start != null) {
      start.join();
    }
  }

  private static void run(SparkSession userSession) {
    long startNanos = System.nanoTime();
    try {
      int plans = warm(userSession).size();
      LOG.info("spark-gpusort: planning warmed up in {} ms ({} plans)",
          (System.nanoTime() - startNanos) / 1_000_000, plans);
    } catch (RuntimeException | LinkageError e) {
      LOG.info("spark-gpusort: the planning warm-up stopped ({}); a first query plans without it",
          e.toString());
    }
  }

  /**
   * The warm-up itself, on the calling thread: looks up the data sources, then plans the sorts
   * {@link #ROUNDS} times in a new session of {@code userSession}'s context; returns the last
   * round's physical plans, one per sort.
   */
  static List<SparkPlan> warm(SparkSession userSession) {
    int sources = lookUpDataSources();
    LOG.debug("spark-gpusort: {} data sources loaded in the planning warm-up", sources);
    SparkSession session = userSession.newSession();
    // Where the SQL extension is installed, its replacement of Spark's sorts is planned too.
    session.conf().set(GpuSortConf.SQL_ENABLED.key(), "true");
    List<SparkPlan> plans = List.of();
    for (int round = 0; round < ROUNDS; round++) {
      plans = planSorts(session);
    }
    return plans;
  }

  /** Loads every registered data source as Spark's lookup of a format by name does. */
  static int lookUpDataSources() {
    ClassLoader loader = Thread.currentThread().getContextClassLoader();
    Iterator<DataSourceRegister> sources = ServiceLoader.load(DataSourceRegister.class,
        loader == null ? PlanningWarmup.class.getClassLoader() : loader).iterator();
    int count = 0;
    while (true) {
      try {
        if (!sources.hasNext()) {
          return count;
        }
        sources.next().shortName();
        count++;
      } catch (ServiceConfigurationError | RuntimeException | LinkageError e) {
        // A source that cannot load fails Spark's lookup only when it is named; so here.
        LOG.debug("spark-gpusort: a data source did not load in the warm-up", e);
      }
    }
  }

  /** Plans each sort the plugin serves over a few rows; returns the physical plans. */
  private static List<SparkPlan> planSorts(SparkSession session) {
    Dataset<Row> rows = session.range(0, WARMUP_ROWS, 1, 2).selectExpr("id AS k",
        "CAST(id AS STRING) AS s", "CAST(id AS DOUBLE) * 0.5 AS d");
    List<Function<Dataset<Row>, Dataset<Row>>> sorts = List.of(
        ds -> new GpuSortTransform<Row>(new Column[] {col("k").desc()}, false).apply(ds),
        ds -> new GpuSortTransform<Row>(new Column[] {col("s").desc(), col("k")}, true).apply(ds),
        ds -> ds.sortWithinPartitions(col("d")),
        ds -> ds.orderBy(col("k").desc_nulls_last(), col("s")));
    List<SparkPlan> plans = new ArrayList<>(sorts.size());
    for (Function<Dataset<Row>, Dataset<Row>> sort : sorts) {
      plans.add(sort.apply(rows).queryExecution().executedPlan());
    }
    return plans;
  }
}
