package io.gpusort.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.apache.spark.sql.Row;

/**
 * Compares a sort's output with Spark's for the same query: Spark's sort is not stable, so the
 * keys must come in the same order and, within a run of equal keys, the rows must be the same
 * multiset.
 */
final class SortedRowsCheck {
  private SortedRowsCheck() {}

  /**
   * Fails unless {@code actual} has {@code expected}'s keys in the same order and the same rows
   * (compared as {@code row} makes them) within each run of equal keys ({@code key} makes a key
   * equal exactly where Spark's order says it is).
   */
  static void assertSameOrder(String what, List<Row> expected, List<Row> actual,
      Function<Row, String> key, Function<Row, String> row) {
    assertEquals(expected.size(), actual.size(), what + ": rows");
    int start = 0;
    while (start < expected.size()) {
      String runKey = key.apply(expected.get(start));
      int end = start;
      while (end < expected.size() && key.apply(expected.get(end)).equals(runKey)) {
        end++;
      }
      List<String> want = new ArrayList<>();
      List<String> got = new ArrayList<>();
      for (int i = start; i < end; i++) {
        String actualKey = key.apply(actual.get(i));
        if (!actualKey.equals(runKey)) {
          fail(what + ": row " + i + " has key " + actualKey + ", Spark's " + runKey);
        }
        want.add(row.apply(expected.get(i)));
        got.add(row.apply(actual.get(i)));
      }
      want.sort(null);
      got.sort(null);
      assertEquals(want, got, what + ": the rows of key " + runKey + " from row " + start);
      start = end;
    }
  }
}
