package io.gpusort.sql.diff;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What a run of trials covered: per shape, how many trials ran, how many of them ran on the
 * plugin's operators with the replacement on (at least one, and with no Spark sort left), how
 * many failed alike both ways, and the differences; so that a shape that silently falls back is
 * seen as a low share.
 */
final class DiffCoverage {
  private static final class Counts {
    int trials;
    int onPlugin;
    int allOnPlugin;
    int bothFailed;
    int differences;
    long timeNanos;
  }

  private final Map<DiffShape, Counts> byShape = new EnumMap<>(DiffShape.class);
  private final Map<DiffTrial.Source, Counts> bySource = new EnumMap<>(DiffTrial.Source.class);
  private final Map<String, Integer> bothFailedWith = new TreeMap<>();
  private final List<DiffTrial.Result> differences = new ArrayList<>();
  private int offRanPlugin;

  void add(DiffTrial.Result result) {
    for (Counts counts : List.of(byShape.computeIfAbsent(result.shape(), s -> new Counts()),
        bySource.computeIfAbsent(result.source(), s -> new Counts()))) {
      counts.trials++;
      counts.timeNanos += result.timeNanos();
      if (result.on().plugin() > 0) {
        counts.onPlugin++;
        if (result.on().spark() == 0) {
          counts.allOnPlugin++;
        }
      }
      if (result.bothFailedWith() != null) {
        counts.bothFailed++;
      }
      if (result.difference() != null) {
        counts.differences++;
      }
    }
    if (result.bothFailedWith() != null) {
      String cause = result.bothFailedWith().replaceAll("\\d+", "N");
      bothFailedWith.merge(cause.length() > 110 ? cause.substring(0, 110) : cause, 1,
          Integer::sum);
    }
    if (result.off().plugin() > 0) {
      offRanPlugin++;
    }
    if (result.difference() != null) {
      differences.add(result);
    }
  }

  List<DiffTrial.Result> differences() {
    return differences;
  }

  /** The report: one table row per shape and per source, then every difference with its replay. */
  String report() {
    StringBuilder text = new StringBuilder();
    int trials = 0;
    long nanos = 0;
    for (Counts counts : byShape.values()) {
      trials += counts.trials;
      nanos += counts.timeNanos;
    }
    text.append(String.format("%d trials, %.0f ms per trial, %d differences%n", trials,
        trials == 0 ? 0.0 : nanos / 1e6 / trials, differences.size()));
    text.append(String.format("%-18s %6s %9s %9s %7s %6s %8s%n", "shape / source", "trials",
        "onPlugin", "allPlugin", "bothErr", "diffs", "ms/trial"));
    byShape.forEach((shape, counts) -> row(text, shape.name(), counts));
    bySource.forEach((source, counts) -> row(text, source.name(), counts));
    text.append("onPlugin: share of trials whose plan with the replacement on had a plugin node; "
        + "allPlugin: and no Spark sort left\n");
    if (offRanPlugin > 0) {
      text.append("WARNING: ").append(offRanPlugin)
          .append(" trials ran a plugin node with the replacement off\n");
    }
    if (!bothFailedWith.isEmpty()) {
      text.append("failed alike both ways:\n");
      bothFailedWith.forEach((cause, n) -> text.append("  ").append(n).append("x ")
          .append(cause).append('\n'));
    }
    for (DiffTrial.Result result : differences) {
      text.append("DIFFERENCE ").append(result.difference()).append("\n  ")
          .append(result.replay()).append('\n');
    }
    return text.toString();
  }

  private static void row(StringBuilder text, String name, Counts c) {
    text.append(String.format("%-18s %6d %8.0f%% %8.0f%% %7d %6d %8.0f%n", name, c.trials,
        100.0 * c.onPlugin / c.trials, 100.0 * c.allOnPlugin / c.trials, c.bothFailed,
        c.differences, c.timeNanos / 1e6 / c.trials));
  }
}
