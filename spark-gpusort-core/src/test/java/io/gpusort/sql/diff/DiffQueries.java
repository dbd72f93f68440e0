package io.gpusort.sql.diff;

import io.gpusort.GpuSort;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.TimestampNTZType;
import org.apache.spark.sql.types.TimestampType;

/**
 * Generates a random query of one {@link DiffShape} over the views {@code t} and {@code u} (both
 * of one {@link DiffSchema}). Sort keys are columns or expressions over them (some of which throw
 * under ANSI, such as {@code 1 / (c - c)}), nested structs and arrays, and strings with the
 * UTF8_LCASE collation; an expression key is usually also projected as {@code kN} so that the
 * comparison can check the order, and sometimes only sorted on.
 */
final class DiffQueries {
  private DiffQueries() {}

  /** One sort key: its SQL, the name it has in the output (null when not projected). */
  private record Key(String sql, String alias, String order, boolean lcase) {
    String ref() {
      return alias != null ? alias : sql;
    }
  }

  /**
   * A query of {@code shape}; a join's first key is {@code skewColumn}, the column the trial
   * skews (a value shared by many rows of both sides).
   */
  static DiffQuery generate(DiffShape shape, DiffSchema schema, int skewColumn,
      SplittableRandom random) {
    return switch (shape) {
      case ORDER_BY, ORDER_BY_LIMIT -> orderBy(shape, schema, random);
      case SORT_BY -> sortBy(schema, random);
      case RANGE_REPARTITION -> rangeRepartition(schema, random);
      case BY_KEY, WITHIN_PARTITIONS -> api(shape, schema, random);
      case WINDOW -> window(schema, random);
      case SORT_MERGE_JOIN -> join(schema, skewColumn, random);
      case GROUP_ORDER -> groupOrder(schema, random);
      case UNION_ORDER -> unionOrder(schema, random);
    };
  }

  private static DiffQuery orderBy(DiffShape shape, DiffSchema schema, SplittableRandom random) {
    List<Key> keys = keys(schema, random, 1 + random.nextInt(4), true);
    String sql = "SELECT " + selectList(schema, keys) + " FROM t ORDER BY " + orders(keys, random);
    boolean cut = false;
    if (shape == DiffShape.ORDER_BY_LIMIT) {
      int choice = random.nextInt(3);
      if (choice != 1) {
        sql += " LIMIT " + random.nextInt(0, 40);
      }
      if (choice != 0) {
        sql += " OFFSET " + random.nextInt(0, 20);
      }
      cut = true;
    }
    return DiffQuery.sql(shape, sql, visiblePrefix(keys), lcase(keys), cut);
  }

  private static DiffQuery sortBy(DiffSchema schema, SplittableRandom random) {
    List<Key> keys = keys(schema, random, 1 + random.nextInt(4), true);
    String distribute = random.nextBoolean() ? ""
        : " DISTRIBUTE BY c" + random.nextInt(schema.size());
    String sql = "SELECT " + selectList(schema, keys) + " FROM t" + distribute + " SORT BY "
        + orders(keys, random);
    return DiffQuery.sql(DiffShape.SORT_BY, sql, visiblePrefix(keys), lcase(keys), false);
  }

  private static DiffQuery rangeRepartition(DiffSchema schema, SplittableRandom random) {
    List<Key> keys = keys(schema, random, 1 + random.nextInt(3), false);
    List<String> names = new ArrayList<>();
    for (Key key : keys) {
      names.add(key.sql());
    }
    String columns = String.join(", ", names);
    // Always a sort above the range exchange, in the columns' order or any other direction: a
    // range repartition alone has no sort for the plugin to take (such trials ran on Spark alone).
    String sql = "SELECT /*+ REPARTITION_BY_RANGE(" + (1 + random.nextInt(4)) + ", " + columns
        + ") */ * FROM t SORT BY " + orders(keys, random);
    return DiffQuery.sql(DiffShape.RANGE_REPARTITION, sql, names, Set.of(), false);
  }

  /** GpuSort.byKey / withinPartitions against orderBy / sortWithinPartitions. */
  private static DiffQuery api(DiffShape shape, DiffSchema schema, SplittableRandom random) {
    // Every key is projected: the API takes columns of its input.
    List<Key> keys = keys(schema, random, 1 + random.nextInt(4), true);
    List<Key> visible = new ArrayList<>();
    for (Key key : keys) {
      visible.add(key.alias() == null && !isColumn(key.sql())
          ? new Key(key.sql(), "k" + visible.size() + "x", key.order(), key.lcase()) : key);
    }
    boolean global = shape == DiffShape.BY_KEY;
    String distribute = global || random.nextBoolean() ? ""
        : " DISTRIBUTE BY c" + random.nextInt(schema.size());
    String base = "SELECT " + selectList(schema, visible) + " FROM t" + distribute;
    List<String> orderTexts = new ArrayList<>();
    Column[] orders = new Column[visible.size()];
    for (int i = 0; i < orders.length; i++) {
      boolean asc = random.nextBoolean();
      int nulls = random.nextInt(3);
      String ref = visible.get(i).ref();
      Column c = functions.col(ref);
      orders[i] = asc
          ? (nulls == 0 ? c.asc() : nulls == 1 ? c.asc_nulls_last() : c.asc_nulls_first())
          : (nulls == 0 ? c.desc() : nulls == 1 ? c.desc_nulls_first() : c.desc_nulls_last());
      orderTexts.add(orders[i].toString());
    }
    String text = base + " .transform(GpuSort." + (global ? "byKey" : "withinPartitions") + "("
        + String.join(", ", orderTexts) + "))";
    java.util.function.Function<SparkSession, Dataset<Row>> on = spark -> {
      Dataset<Row> input = spark.sql(base);
      return input.transform(global ? GpuSort.byKey(orders) : GpuSort.withinPartitions(orders));
    };
    java.util.function.Function<SparkSession, Dataset<Row>> off = spark -> {
      Dataset<Row> input = spark.sql(base);
      return global ? input.orderBy(orders) : input.sortWithinPartitions(orders);
    };
    List<String> names = new ArrayList<>();
    for (Key key : visible) {
      names.add(key.ref());
    }
    return new DiffQuery(shape, text, on, off, names, lcase(visible), false);
  }

  private static DiffQuery window(DiffSchema schema, SplittableRandom random) {
    List<Key> order = new ArrayList<>();
    for (Key key : keys(schema, random, 1 + random.nextInt(2), true)) {
      // Nothing but the window's output is projected here.
      order.add(new Key(key.sql(), null, null, false));
    }
    String partition = random.nextInt(4) == 0 ? ""
        : "PARTITION BY c" + random.nextInt(schema.size()) + " ";
    String over = " OVER (" + partition + "ORDER BY " + orders(order, random) + ")";
    StringBuilder select = new StringBuilder(selectList(schema, List.of()));
    select.append(", rank()").append(over).append(" AS w0, dense_rank()").append(over)
        .append(" AS w1, count(*)").append(over).append(" AS w2");
    int exact = exactColumn(schema, random);
    if (exact >= 0) {
      select.append(", min(c").append(exact).append(')').append(over).append(" AS w3");
    }
    String sql = "SELECT " + select + " FROM t";
    return DiffQuery.sql(DiffShape.WINDOW, sql, List.of(), Set.of(), false);
  }

  private static DiffQuery join(DiffSchema schema, int first, SplittableRandom random) {
    String type = DiffValues.pick(random, "INNER", "LEFT OUTER", "RIGHT OUTER", "FULL OUTER",
        "LEFT SEMI", "LEFT ANTI");
    StringBuilder on = new StringBuilder("t.c" + first + " = u.c" + first);
    if (schema.size() > 1 && random.nextBoolean()) {
      int second = random.nextInt(schema.size());
      on.append(" AND t.c").append(second).append(random.nextBoolean() ? " <=> u.c" : " = u.c")
          .append(second);
    }
    String select = type.startsWith("LEFT S") || type.startsWith("LEFT A") ? "t.*" : "t.*, u.*";
    String sql = "SELECT /*+ MERGE(t, u) */ " + select + " FROM t " + type + " JOIN u ON " + on;
    return DiffQuery.sql(DiffShape.SORT_MERGE_JOIN, sql, List.of(), Set.of(), false);
  }

  private static DiffQuery groupOrder(DiffSchema schema, SplittableRandom random) {
    List<Key> groups = keys(schema, random, 1 + random.nextInt(2), false);
    List<String> names = new ArrayList<>();
    for (Key key : groups) {
      names.add(key.sql());
    }
    String columns = String.join(", ", names);
    String sql;
    List<String> keyNames = new ArrayList<>(names);
    if (random.nextBoolean()) {
      sql = "SELECT DISTINCT " + columns + " FROM t ORDER BY " + orders(groups, random);
    } else {
      int exact = exactColumn(schema, random);
      String min = exact >= 0 ? ", min(c" + exact + ") AS m" : "";
      // Ordered by the count first, then the groups: a total order on the output.
      sql = "SELECT " + columns + ", count(*) AS n" + min + " FROM t GROUP BY " + columns
          + " ORDER BY n DESC, " + orders(groups, random);
      keyNames.add(0, "n");
    }
    if (random.nextInt(4) == 0) {
      return DiffQuery.sql(DiffShape.GROUP_ORDER, sql + " LIMIT " + random.nextInt(1, 20),
          keyNames, Set.of(), true);
    }
    return DiffQuery.sql(DiffShape.GROUP_ORDER, sql, keyNames, Set.of(), false);
  }

  private static DiffQuery unionOrder(DiffSchema schema, SplittableRandom random) {
    List<Key> keys = keys(schema, random, 1 + random.nextInt(3), false);
    String all = selectList(schema, List.of());
    String sql = "SELECT " + all + " FROM t UNION " + (random.nextBoolean() ? "ALL " : "")
        + "SELECT " + all + " FROM u ORDER BY " + orders(keys, random);
    return DiffQuery.sql(DiffShape.UNION_ORDER, sql, names(keys), Set.of(), false);
  }

  /** {@code count} keys; only plain columns unless {@code expressions}. */
  private static List<Key> keys(DiffSchema schema, SplittableRandom random, int count,
      boolean expressions) {
    List<Key> keys = new ArrayList<>();
    List<Integer> unused = new ArrayList<>();
    for (int i = 0; i < schema.size(); i++) {
      unused.add(i);
    }
    for (int i = 0; i < count && !unused.isEmpty(); i++) {
      // Distinct columns, so that DISTINCT and UNION lists name no column twice.
      int column = unused.remove(random.nextInt(unused.size()));
      if (!expressions || random.nextInt(5) < 3) {
        keys.add(new Key("c" + column, null, null, false));
        continue;
      }
      String sql = expression(schema, column, random);
      boolean lcase = sql.endsWith("COLLATE UTF8_LCASE");
      // Mostly projected (so that the order can be checked); sometimes only sorted on.
      String alias = random.nextInt(4) == 0 ? null : "k" + i;
      keys.add(new Key(sql, alias, null, lcase));
    }
    return keys;
  }

  /** An expression over column {@code column}, of a kind that fits its type. */
  private static String expression(DiffSchema schema, int column, SplittableRandom random) {
    String c = "c" + column;
    String other = "c" + random.nextInt(schema.size());
    DataType type = schema.type(column);
    if (random.nextInt(5) == 0) {
      // Nested keys: Spark orders structs and arrays, the plugin falls back.
      return DiffValues.pick(random, "named_struct('a', " + c + ", 'b', " + other + ")",
          "array(" + c + ", " + c + ")", "struct(" + c + ")", c + " IS NULL");
    }
    if (type instanceof StringType) {
      return DiffValues.pick(random, "upper(" + c + ")", "substr(" + c + ", 1, 3)",
          "length(" + c + ")", "CAST(" + c + " AS INT)", "concat(" + c + ", 'x')",
          c + " COLLATE UTF8_LCASE");
    } else if (type instanceof BinaryType) {
      return DiffValues.pick(random, "substr(" + c + ", 2)", "length(" + c + ")");
    } else if (type instanceof DateType) {
      return DiffValues.pick(random, "date_add(" + c + ", 1)", "year(" + c + ")");
    } else if (type instanceof TimestampType || type instanceof TimestampNTZType) {
      return DiffValues.pick(random, "CAST(" + c + " AS DATE)", "CAST(" + c + " AS STRING)");
    } else if (type instanceof BooleanType || DiffSchema.isInterval(type)) {
      return DiffValues.pick(random, "NOT (" + c + " IS NULL)", "CAST(" + c + " AS STRING)");
    } else if (DiffSchema.isFloating(type)) {
      return DiffValues.pick(random, "-" + c, c + " * 2", "CAST(" + c + " AS STRING)",
          "CAST(" + c + " AS FLOAT)");
    } else if (type instanceof DecimalType) {
      return DiffValues.pick(random, "-" + c, c + " * 2", "CAST(" + c + " AS DOUBLE)");
    }
    // Integral: some of these throw under ANSI (overflow, division by zero).
    return DiffValues.pick(random, "-" + c, c + " % 7", "1 / (" + c + " - " + c + ")",
        c + " + 1", "abs(" + c + ")", "CAST(" + c + " AS STRING)", "CAST(" + c + " AS DOUBLE)");
  }

  private static String selectList(DiffSchema schema, List<Key> keys) {
    StringBuilder select = new StringBuilder();
    for (int i = 0; i < schema.size(); i++) {
      select.append(i == 0 ? "" : ", ").append('c').append(i);
    }
    for (Key key : keys) {
      if (key.alias() != null) {
        select.append(", ").append(key.sql()).append(" AS ").append(key.alias());
      }
    }
    return select.toString();
  }

  /** The ORDER BY list: each key by its alias or its expression, random direction and nulls. */
  private static String orders(List<Key> keys, SplittableRandom random) {
    List<String> orders = new ArrayList<>();
    for (Key key : keys) {
      String ref = key.alias() != null && random.nextBoolean() ? key.alias() : key.sql();
      orders.add(ref + DiffValues.pick(random, "", " ASC", " DESC") + DiffValues.pick(random, "",
          "", " NULLS FIRST", " NULLS LAST"));
    }
    return String.join(", ", orders);
  }

  /** Output names of the keys up to the first one that is not projected. */
  private static List<String> visiblePrefix(List<Key> keys) {
    List<String> names = new ArrayList<>();
    for (Key key : keys) {
      if (key.alias() == null && !isColumn(key.sql())) {
        break;
      }
      names.add(key.ref());
    }
    return names;
  }

  private static List<String> names(List<Key> keys) {
    List<String> names = new ArrayList<>();
    for (Key key : keys) {
      names.add(key.ref());
    }
    return names;
  }

  private static Set<String> lcase(List<Key> keys) {
    Set<String> names = new HashSet<>();
    for (Key key : keys) {
      if (key.lcase() && key.alias() != null) {
        names.add(key.alias());
      }
    }
    return names;
  }

  private static boolean isColumn(String sql) {
    return sql.matches("c\\d+");
  }

  /**
   * A column whose min() does not depend on the order rows arrive in (not float or double, where
   * -0.0 and 0.0 or two NaNs tie with different bits), or -1.
   */
  private static int exactColumn(DiffSchema schema, SplittableRandom random) {
    int start = random.nextInt(schema.size());
    for (int i = 0; i < schema.size(); i++) {
      int column = (start + i) % schema.size();
      if (!DiffSchema.isFloating(schema.type(column))) {
        return column;
      }
    }
    return -1;
  }
}
