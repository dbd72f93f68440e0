package io.gpusort.sql.diff;

import io.gpusort.compat.ScalaCollections;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import org.apache.spark.SparkException;
import org.apache.spark.sql.Row;

/**
 * Compares the result with the replacement on against the one with it off. Rows come in the same
 * order of their key values (by Spark's equality: all NaNs equal, -0.0 equal to 0.0, UTF8_LCASE
 * ignoring case); rows with equal keys are the same multiset, every value compared exactly
 * (floats and doubles by their raw bits: a sort must not change a value, NaN payloads included).
 * Errors are compared by the class of the first cause that is not a SparkException wrapper.
 */
final class DiffCompare {
  private DiffCompare() {}

  /** What one run of a query gave: its rows per partition (one list if not compared by
   *  partition), or its error. */
  record Outcome(List<List<Row>> partitions, Throwable error) {}

  /** Null when the outcomes agree, else a one-line description of the first difference. */
  static String difference(DiffQuery query, Outcome off, Outcome on) {
    if (off.error() != null || on.error() != null) {
      String offClass = errorClass(off.error());
      String onClass = errorClass(on.error());
      return Objects.equals(offClass, onClass) ? null
          : "error differs: off=" + offClass + ", on=" + onClass
              + (on.error() != null ? " (" + firstLine(rootCause(on.error())) + ")" : "");
    }
    if (off.partitions().size() != on.partitions().size()) {
      return "partition count differs: off=" + off.partitions().size() + ", on="
          + on.partitions().size();
    }
    for (int p = 0; p < off.partitions().size(); p++) {
      String diff = sequence(query, off.partitions().get(p), on.partitions().get(p));
      if (diff != null) {
        return (off.partitions().size() > 1 ? "partition " + p + ": " : "") + diff;
      }
    }
    return null;
  }

  private static String sequence(DiffQuery query, List<Row> off, List<Row> on) {
    if (off.size() != on.size()) {
      return "row count differs: off=" + off.size() + ", on=" + on.size();
    }
    if (off.isEmpty()) {
      return null;
    }
    int[] keys = keyIndexes(query, off.get(0));
    boolean[] lcase = new boolean[keys.length];
    for (int i = 0; i < keys.length; i++) {
      lcase[i] = query.caseInsensitiveKeys().contains(off.get(0).schema().fieldNames()[keys[i]]);
    }
    List<List<Row>> offGroups = groups(off, keys, lcase);
    List<List<Row>> onGroups = groups(on, keys, lcase);
    int row = 0;
    for (int g = 0; g < Math.min(offGroups.size(), onGroups.size()); g++) {
      List<Row> a = offGroups.get(g);
      List<Row> b = onGroups.get(g);
      if (a.size() != b.size()
          || !orderKey(a.get(0), keys, lcase).equals(orderKey(b.get(0), keys, lcase))) {
        return "key order differs at row " + row + ": off " + canonical(a.get(0)) + ", on "
            + canonical(b.get(0));
      }
      boolean cut = query.cutEdges() && (g == 0 || g == offGroups.size() - 1);
      if (!cut) {
        String diff = multiset(a, b);
        if (diff != null) {
          return "rows differ in the key group at row " + row + ": " + diff;
        }
      }
      row += a.size();
    }
    return offGroups.size() == onGroups.size() ? null : "key groups differ in number";
  }

  private static int[] keyIndexes(DiffQuery query, Row sample) {
    List<String> names = Arrays.asList(sample.schema().fieldNames());
    int[] keys = new int[query.keyColumns().size()];
    for (int i = 0; i < keys.length; i++) {
      // The first column of that name (a join outputs no keys).
      keys[i] = names.indexOf(query.keyColumns().get(i));
      if (keys[i] < 0) {
        throw new IllegalStateException("no key column " + query.keyColumns().get(i) + " in "
            + names);
      }
    }
    return keys;
  }

  /** Consecutive rows with equal keys; with no keys, all rows in one group. */
  private static List<List<Row>> groups(List<Row> rows, int[] keys, boolean[] lcase) {
    List<List<Row>> groups = new ArrayList<>();
    Object last = null;
    for (Row row : rows) {
      Object key = orderKey(row, keys, lcase);
      if (groups.isEmpty() || !key.equals(last)) {
        groups.add(new ArrayList<>());
        last = key;
      }
      groups.get(groups.size() - 1).add(row);
    }
    return groups;
  }

  private static String multiset(List<Row> off, List<Row> on) {
    List<String> a = canonicalSorted(off);
    List<String> b = canonicalSorted(on);
    for (int i = 0; i < a.size(); i++) {
      if (!a.get(i).equals(b.get(i))) {
        List<String> onlyOff = new ArrayList<>(a);
        onlyOff.removeAll(b);
        List<String> onlyOn = new ArrayList<>(b);
        onlyOn.removeAll(a);
        return "only off " + head(onlyOff) + ", only on " + head(onlyOn);
      }
    }
    return null;
  }

  private static String head(List<String> rows) {
    return rows.size() <= 3 ? rows.toString() : rows.subList(0, 3) + " +" + (rows.size() - 3);
  }

  private static List<String> canonicalSorted(List<Row> rows) {
    List<String> texts = new ArrayList<>(rows.size());
    for (Row row : rows) {
      texts.add(canonical(row));
    }
    texts.sort(null);
    return texts;
  }

  /** The key values of a row as Spark's ordering sees them (equal keys give equal lists). */
  private static List<Object> orderKey(Row row, int[] keys, boolean[] lcase) {
    List<Object> values = new ArrayList<>(keys.length);
    for (int i = 0; i < keys.length; i++) {
      Object value = ordering(row.get(keys[i]));
      values.add(lcase[i] && value instanceof String s ? s.toLowerCase(Locale.ROOT) : value);
    }
    return values;
  }

  private static Object ordering(Object value) {
    if (value instanceof Double d) {
      return Double.isNaN(d) ? "NaN" : d == 0.0 ? (Object) 0.0 : d;
    } else if (value instanceof Float f) {
      return Float.isNaN(f) ? "NaN" : f == 0.0f ? (Object) 0.0f : f;
    } else if (value instanceof byte[] bytes) {
      return HexFormat.of().formatHex(bytes);
    } else if (value instanceof Row row) {
      List<Object> fields = new ArrayList<>();
      for (int i = 0; i < row.size(); i++) {
        fields.add(ordering(row.get(i)));
      }
      return fields;
    } else if (value instanceof scala.collection.Seq<?> seq) {
      List<Object> elements = new ArrayList<>();
      for (Object element : ScalaCollections.asJava(seq)) {
        elements.add(ordering(element));
      }
      return elements;
    }
    return value == null ? "null" : value;
  }

  /** A row as exact text: floating values by raw bits, binaries in hex, nested values inside. */
  static String canonical(Object value) {
    if (value == null) {
      return "null";
    } else if (value instanceof Double d) {
      return "d" + Long.toHexString(Double.doubleToRawLongBits(d)) + "(" + d + ")";
    } else if (value instanceof Float f) {
      return "f" + Integer.toHexString(Float.floatToRawIntBits(f)) + "(" + f + ")";
    } else if (value instanceof byte[] bytes) {
      return "x" + HexFormat.of().formatHex(bytes);
    } else if (value instanceof Row row) {
      StringBuilder text = new StringBuilder("(");
      for (int i = 0; i < row.size(); i++) {
        text.append(i == 0 ? "" : ", ").append(canonical(row.get(i)));
      }
      return text.append(')').toString();
    } else if (value instanceof scala.collection.Seq<?> seq) {
      List<String> elements = new ArrayList<>();
      for (Object element : ScalaCollections.asJava(seq)) {
        elements.add(canonical(element));
      }
      return elements.toString();
    } else if (value instanceof String s) {
      return "'" + s + "'";
    }
    return value.toString();
  }

  /** The class of the error's first cause that is not a SparkException wrapper, or null. */
  static String errorClass(Throwable error) {
    return error == null ? null : rootCause(error).getClass().getName();
  }

  static Throwable rootCause(Throwable error) {
    Throwable cause = error;
    while (cause.getCause() != null && cause != cause.getCause()
        && (cause instanceof SparkException
            || cause.getClass().getName().endsWith("ExecutionException"))) {
      cause = cause.getCause();
    }
    return cause;
  }

  static String firstLine(Throwable error) {
    String message = String.valueOf(error.getMessage());
    int newline = message.indexOf('\n');
    String line = newline < 0 ? message : message.substring(0, newline);
    return error.getClass().getSimpleName() + ": "
        + (line.length() > 160 ? line.substring(0, 160) + "..." : line);
  }
}
