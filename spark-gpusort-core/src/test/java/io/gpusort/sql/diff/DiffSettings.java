package io.gpusort.sql.diff;

import io.gpusort.sql.SparkTestSession;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.SplittableRandom;
import org.apache.spark.sql.SparkSession;

/**
 * The session settings of one trial: Spark's (adaptive execution, off-heap column vectors, ANSI,
 * shuffle partitions) and the plugin's (global mode, string prefix, columnar intake), applied
 * before the trial's queries and put back as they were after it.
 */
final class DiffSettings {
  final Map<String, String> values = new LinkedHashMap<>();
  private final Map<String, String> previous = new LinkedHashMap<>();

  static DiffSettings random(SplittableRandom random) {
    DiffSettings settings = new DiffSettings();
    Map<String, String> v = settings.values;
    v.put("spark.sql.adaptive.enabled", String.valueOf(random.nextBoolean()));
    v.put("spark.sql.columnVector.offheap.enabled", String.valueOf(random.nextBoolean()));
    v.put("spark.sql.ansi.enabled", String.valueOf(random.nextBoolean()));
    v.put("spark.sql.shuffle.partitions", String.valueOf(1 + random.nextInt(4)));
    // Joins stay sort-merge joins whatever their size (with or without adaptive execution).
    v.put("spark.sql.autoBroadcastJoinThreshold", "-1");
    // Dates and timestamps as java.time values: exact over the whole range, no calendar switch.
    v.put("spark.sql.datetime.java8API.enabled", "true");
    v.put("spark.gpusort.global.mode", DiffValues.pick(random, "merge", "merge", "sort"));
    v.put("spark.gpusort.key.stringPrefixBytes", DiffValues.pick(random, "1", "4", "16"));
    v.put("spark.gpusort.intake.columnar", String.valueOf(random.nextInt(4) != 0));
    v.put("spark.gpusort.cpu.gatherRows", String.valueOf(random.nextInt(4) == 0));
    return settings;
  }

  void apply(SparkSession spark) {
    for (Map.Entry<String, String> entry : values.entrySet()) {
      previous.put(entry.getKey(), spark.conf().get(entry.getKey(), null));
      spark.conf().set(entry.getKey(), entry.getValue());
    }
  }

  void restore(SparkSession spark) {
    for (Map.Entry<String, String> entry : previous.entrySet()) {
      if (entry.getValue() == null) {
        spark.conf().unset(entry.getKey());
      } else {
        spark.conf().set(entry.getKey(), entry.getValue());
      }
    }
    previous.clear();
    SparkTestSession.resetGpuSortConf();
  }

  /** The settings as a replay prints them, without the ones every trial has. */
  String describe() {
    StringBuilder text = new StringBuilder();
    values.forEach((key, value) -> {
      if (!key.equals("spark.sql.autoBroadcastJoinThreshold")
          && !key.equals("spark.sql.datetime.java8API.enabled")) {
        text.append(text.length() == 0 ? "" : " ")
            .append(key.replace("spark.sql.", "").replace("spark.gpusort.", "gpusort."))
            .append('=').append(value);
      }
    });
    return text.toString();
  }
}
