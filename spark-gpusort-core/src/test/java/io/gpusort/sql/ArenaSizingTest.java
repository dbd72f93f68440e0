package io.gpusort.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.gpusort.config.GpuSortConf;
import io.gpusort.memory.ArenaSettings;
import io.gpusort.memory.PinMethod;
import java.util.Map;
import org.apache.spark.SparkConf;
import org.junit.jupiter.api.Test;

/**
 * The arena's settings as an executor reads them: the keys, and under YARN or Kubernetes the
 * memory overhead beyond Spark's own default as its bound (none set: no arena there).
 */
class ArenaSizingTest {
  private static final long MIB = 1L << 20;

  private static SparkConf conf(String... pairs) {
    SparkConf conf = new SparkConf(false);
    for (int i = 0; i < pairs.length; i += 2) {
      conf.set(pairs[i], pairs[i + 1]);
    }
    return conf;
  }

  @Test
  void localAndStandaloneHaveNoContainerBound() {
    assertEquals(Long.MAX_VALUE, ArenaSizing.containerBoundBytes(conf("spark.master", "local[16]")));
    assertEquals(Long.MAX_VALUE, ArenaSizing.containerBoundBytes(
        conf("spark.master", "spark://h:7077", "spark.executor.memoryOverhead", "1g")));
    assertEquals(Long.MAX_VALUE, ArenaSizing.containerBoundBytes(null));
  }

  @Test
  void yarnAndKubernetesBoundTheArenaByTheOverheadBeyondSparksOwn() {
    assertEquals(0, ArenaSizing.containerBoundBytes(conf("spark.master", "yarn")),
        "no overhead set: nothing page-locked beyond what the container counts");
    // 16g executor: Spark's own overhead is 0.1 x 16384 MiB = 1638 MiB.
    assertEquals((10240 - 1638) * MIB, ArenaSizing.containerBoundBytes(conf("spark.master",
        "yarn", "spark.executor.memory", "16g", "spark.executor.memoryOverhead", "10g")));
    // A bare number is MiB, as Spark reads it; the least own overhead is 384 MiB.
    assertEquals((4096 - 384) * MIB, ArenaSizing.containerBoundBytes(conf("spark.master",
        "k8s://https://api:6443", "spark.executor.memory", "2g",
        "spark.executor.memoryOverhead", "4096")));
    assertEquals((8192 - 6553) * MIB, ArenaSizing.containerBoundBytes(conf("spark.master",
        "yarn", "spark.executor.memory", "16g", "spark.executor.memoryOverheadFactor", "0.4",
        "spark.executor.memoryOverhead", "8g")));
    assertEquals(0, ArenaSizing.containerBoundBytes(conf("spark.master", "yarn",
        "spark.executor.memory", "16g", "spark.executor.memoryOverhead", "1g")));
  }

  @Test
  void keysReachTheSettings() {
    GpuSortConf gpusort = GpuSortConf.of(Map.of("spark.gpusort.memory.pinned.arenaBytes", "12g",
        "spark.gpusort.memory.pinned.hostFraction", "0.5",
        "spark.gpusort.memory.pinned.registerDir", "/tmp/x",
        "spark.gpusort.memory.pinned.restRatio", "3",
        "spark.gpusort.memory.pinned.method", "driver",
        "spark.gpusort.memory.pinned.busyShare", "0"));
    ArenaSettings s = ArenaSizing.of(gpusort, conf("spark.master", "local[4]"));
    assertEquals(12L << 30, s.requestedBytes());
    assertEquals(0.5, s.hostFraction());
    assertEquals("/tmp/x", s.registerDir().toString());
    assertEquals(3.0, s.restRatio());
    assertEquals(PinMethod.DRIVER, s.pinMethod());
    assertEquals(0.0, s.busyShare());
    ArenaSettings auto = ArenaSizing.of(GpuSortConf.of(Map.of()), conf("spark.master", "yarn"));
    assertEquals(0.0, auto.restRatio(), "pinning at full speed unless set");
    assertEquals(PinMethod.HUGEPAGES, auto.pinMethod(), "huge pages of our own unless set");
    assertEquals(ArenaSettings.DEFAULT_BUSY_SHARE, auto.busyShare(), "pinning beside tasks");
    assertEquals(ArenaSettings.AUTO, auto.requestedBytes());
    assertEquals(0, auto.boundBytes());
    assertEquals(0, auto.requestBytes(128L << 30, 1), "YARN, no overhead set: no arena");
  }
}
