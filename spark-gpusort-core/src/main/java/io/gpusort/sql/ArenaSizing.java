package io.gpusort.sql;

import io.gpusort.config.GpuSortConf;
import io.gpusort.memory.ArenaSettings;
import io.gpusort.memory.PinMethod;
import java.io.Serializable;
import java.nio.file.Path;
import java.util.Locale;
import org.apache.spark.SparkConf;

/**
 * The page-locked arena's settings as an executor reads them: the spark.gpusort.memory.pinned.*
 * keys, and, where YARN or Kubernetes police the container's memory, what the executor's memory
 * overhead holds beyond Spark's own default overhead, since page-locked memory counts in the
 * container and the heap may fill what Spark gave it.
 */
public final class ArenaSizing {
  /** Spark's least memory overhead of an executor, in MiB. */
  static final long MIN_OVERHEAD_MIB = 384;
  /** Spark's default memory overhead factor. */
  static final double DEFAULT_OVERHEAD_FACTOR = 0.10;

  private ArenaSizing() {}

  /** The settings in {@code conf}, bounded for the cluster manager {@code sparkConf} names. */
  public static ArenaSettings of(GpuSortConf conf, SparkConf sparkConf) {
    return Keys.of(conf).settings(sparkConf);
  }

  /**
   * The spark.gpusort.memory.pinned.* keys as read where a sort is planned, carried to the
   * executor, which bounds them for its cluster manager ({@link #settings}).
   */
  record Keys(long requestedBytes, double hostFraction, String registerDir, double restRatio,
      PinMethod pinMethod, double busyShare) implements Serializable {
    static Keys of(GpuSortConf conf) {
      return new Keys(conf.get(GpuSortConf.PINNED_ARENA_BYTES),
          conf.get(GpuSortConf.PINNED_HOST_FRACTION), conf.get(GpuSortConf.PINNED_REGISTER_DIR),
          conf.get(GpuSortConf.PINNED_REST_RATIO), conf.get(GpuSortConf.PINNED_METHOD),
          conf.get(GpuSortConf.PINNED_BUSY_SHARE));
    }

    /** These keys, bounded for the cluster manager {@code sparkConf} names (none if null). */
    ArenaSettings settings(SparkConf sparkConf) {
      return new ArenaSettings(requestedBytes, hostFraction, containerBoundBytes(sparkConf),
          Path.of(registerDir), ArenaSettings.DEFAULT_PIN_THREADS, restRatio, pinMethod,
          busyShare);
    }
  }

  /**
   * Under YARN or Kubernetes: the executor's memory overhead beyond Spark's default overhead for
   * its memory (none where the overhead is not set), else no bound.
   */
  static long containerBoundBytes(SparkConf sparkConf) {
    if (sparkConf == null) {
      return Long.MAX_VALUE;
    }
    String master = sparkConf.get("spark.master", "").toLowerCase(Locale.ROOT);
    if (!master.startsWith("yarn") && !master.startsWith("k8s")) {
      return Long.MAX_VALUE;
    }
    if (!sparkConf.contains("spark.executor.memoryOverhead")) {
      return 0;
    }
    long overheadMib = sparkConf.getSizeAsMb("spark.executor.memoryOverhead");
    long executorMib = sparkConf.getSizeAsMb("spark.executor.memory", "1g");
    double factor = sparkConf.getDouble("spark.executor.memoryOverheadFactor",
        DEFAULT_OVERHEAD_FACTOR);
    long sparkOwnMib = Math.max(MIN_OVERHEAD_MIB, (long) (factor * executorMib));
    return Math.max(0, overheadMib - sparkOwnMib) << 20;
  }
}
