package io.gpusort.sql;

import io.gpusort.config.ConfEntry;
import io.gpusort.config.GpuSortConf;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.SparkSession;
import scala.jdk.javaapi.CollectionConverters;

/**
 * The one local {@link SparkSession} that every Spark test of this module shares: starting Spark
 * takes seconds, so it is created lazily on first use and lives until the JVM exits (Spark's own
 * shutdown hook stops it). Tests must not stop it.
 *
 * <p>Settings: {@code local[2]}, no UI, 8 shuffle partitions, driver bound to 127.0.0.1, adaptive
 * execution left at Spark's default. Tests that change {@code spark.gpusort.*} keys call
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

  private SparkTestSession() {}

  /** The shared session, created on the first call. */
  public static SparkSession get() {
    return Holder.SESSION;
  }

  /** Unsets every {@code spark.gpusort.*} key of the shared session, declared or not. */
  public static void resetGpuSortConf() {
    SparkSession spark = get();
    List<String> keys = new ArrayList<>();
    for (String key : CollectionConverters.asJava(spark.conf().getAll()).keySet()) {
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
    spark.conf().set(SQL_ENABLED, "false");
  }

  /** Initialization-on-demand holder: the JVM creates the session once, on first access. */
  private static final class Holder {
    static final SparkSession SESSION = create();
  }

  private static SparkSession create() {
    SparkSession spark = SparkSession.builder()
        .master("local[2]")
        .appName("spark-gpusort-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", String.valueOf(SHUFFLE_PARTITIONS))
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.extensions", "io.gpusort.spark.GpuSortExtensions")
        .config(SQL_ENABLED, "false")
        .getOrCreate();
    spark.sparkContext().setLogLevel("WARN");
    return spark;
  }
}
