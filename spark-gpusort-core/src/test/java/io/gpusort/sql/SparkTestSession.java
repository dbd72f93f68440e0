package io.gpusort.sql;

import io.gpusort.compat.ScalaCollections;
import io.gpusort.config.ConfEntry;
import io.gpusort.config.GpuSortConf;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.SparkSession;

/**
 * The one local {@link SparkSession} that every Spark test of this module shares: starting Spark
 * takes seconds, so it is created lazily on first use and lives until the JVM exits (Spark's own
 * shutdown hook stops it). Tests must not stop it.
 *
 * <p>Settings: {@code local[2]}, no UI, 8 shuffle partitions, driver bound to 127.0.0.1, adaptive
 * execution left at Spark's default, a task that ends holding execution memory fails; in the
 * spilling run ({@link #SPILLING}) also a small memory and forced spills. Tests that change {@code spark.gpusort.*} keys call
 * {@link #resetGpuSortConf()} afterwards so that the next test starts from the defaults.
 */
public final class SparkTestSession {
  /** Prefix of every configuration key this project reads. */
  public static final String GPUSORT_PREFIX = GpuSortConf.PREFIX;

  /**
   * The session has the SQL extension (io.gpusort.spark.GpuSortExtensions) with the replacement
   * of Spark's sorts switched off, so that tests compare against Spark's own sort; the SQL tests
   * switch it on.
   */
  public static final String SQL_ENABLED = "spark.gpusort.sql.enabled";

  /** Shuffle partitions of the shared session: small, so that tests stay fast on two cores. */
  public static final int SHUFFLE_PARTITIONS = 8;

  /**
   * Whether this JVM runs the suites with spilling sorts ({@code -Dgpusort.test.spill=true}, the
   * surefire execution "spilling"): a small execution memory (Spark's test settings), every
   * GpuSort spilling after {@link #SPILL_ROWS} rows held, and Spark's I/O encryption on, so that
   * spill files are compressed and encrypted as on a secured cluster.
   */
  public static final boolean SPILLING = Boolean.getBoolean("gpusort.test.spill");

  /** Rows a task's sort holds before it spills, in the spilling run. */
  public static final int SPILL_ROWS = 40;

  /** The spark.gpusort.* settings every test starts from: none, or the spilling run's. */
  private static final java.util.Map<String, String> BASE_GPUSORT_CONF = SPILLING
      ? java.util.Map.of(GpuSortConf.SPILL_ROWS_THRESHOLD.key(), String.valueOf(SPILL_ROWS))
      : java.util.Map.of();

  private SparkTestSession() {}

  /** The shared session, created on the first call. */
  public static SparkSession get() {
    return Holder.SESSION;
  }

  /** Unsets every {@code spark.gpusort.*} key of the shared session, declared or not. */
  public static void resetGpuSortConf() {
    SparkSession spark = get();
    List<String> keys = new ArrayList<>();
    for (String key : ScalaCollections.asJava(spark.conf().getAll()).keySet()) {
      if (key.startsWith(GPUSORT_PREFIX)) {
        keys.add(key);
      }
    }
    for (ConfEntry<?> entry : GpuSortConf.entries()) {
      keys.add(entry.key());
    }
    for (String key : keys) {
      spark.conf().unset(key);
    }
    BASE_GPUSORT_CONF.forEach((key, value) -> spark.conf().set(key, value));
    spark.conf().set(SQL_ENABLED, "false");
  }

  /** Initialization-on-demand holder: the JVM creates the session once, on first access. */
  private static final class Holder {
    static final SparkSession SESSION = create();
  }

  private static SparkSession create() {
    SparkSession.Builder builder = SparkSession.builder();
    if (SPILLING) {
      // 64 MiB of "system memory" and no reserve: about 38 MiB of execution and storage memory
      // for the two task slots, so Spark's own operators spill as well.
      builder.config("spark.testing.memory", String.valueOf(64L << 20))
          .config("spark.testing.reservedMemory", "0")
          .config("spark.io.encryption.enabled", "true");
    }
    BASE_GPUSORT_CONF.forEach(builder::config);
    // How the arena pins (on the GPU host: -Dgpusort.test.pinMethod=driver runs the suites on the
    // driver's own allocation rather than the default, huge pages of the process's own).
    String pinMethod = System.getProperty("gpusort.test.pinMethod");
    if (pinMethod != null) {
      builder.config(GpuSortConf.PINNED_METHOD.key(), pinMethod);
    }
    SparkSession spark = builder
        .master(System.getProperty("gpusort.test.master", "local[2]"))
        .appName("spark-gpusort-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", String.valueOf(SHUFFLE_PARTITIONS))
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.extensions", "io.gpusort.spark.GpuSortExtensions")
        // Spark 4's defaults, which Spark 3.5 does not have (it refuses to write or read dates
        // before 1582 and timestamps before 1900 in Parquet unless told which calendar).
        .config("spark.sql.parquet.int96RebaseModeInWrite", "CORRECTED")
        .config("spark.sql.parquet.datetimeRebaseModeInWrite", "CORRECTED")
        .config("spark.sql.parquet.int96RebaseModeInRead", "CORRECTED")
        .config("spark.sql.parquet.datetimeRebaseModeInRead", "CORRECTED")
        .config(SQL_ENABLED, "false")
        // A task that ends holding execution memory fails, instead of a warning in the log.
        .config("spark.unsafe.exceptionOnMemoryLeak", "true")
        .getOrCreate();
    spark.sparkContext().setLogLevel("WARN");
    // The local session's early start (the engine, its arena and warm-ups) runs in the
    // background; the suites count what sorts hold, so they begin once it is done.
    try {
      EarlyStart.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    // Which engine "auto" resolved to: the GPU host's logs show the suites ran on its device.
    System.out.println("spark-gpusort tests: engine " + io.gpusort.GpuSort.engineName(spark)
        + (SPILLING ? ", spilling" : "")
        + (pinMethod != null ? ", pin method " + pinMethod : ""));
    return spark;
  }
}
