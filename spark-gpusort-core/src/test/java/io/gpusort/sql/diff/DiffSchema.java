package io.gpusort.sql.diff;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.DayTimeIntervalType;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.types.YearMonthIntervalType;

/**
 * A random schema of atomic columns ({@code c0, c1, ...}) and random rows for it. Every column has
 * its own null rate and is either drawn from a small pool of values (ties, and dictionary
 * encoding in Parquet) or fully random. Nested keys (structs, arrays) and collated strings are
 * made from these columns by the query ({@link DiffQueries}), so that the data stays atomic.
 */
final class DiffSchema {
  /** The atomic types a column can have, every one that Spark can order. */
  static final DataType[] TYPES = {
    DataTypes.BooleanType, DataTypes.ByteType, DataTypes.ShortType, DataTypes.IntegerType,
    DataTypes.LongType, DataTypes.FloatType, DataTypes.DoubleType, DataTypes.StringType,
    DataTypes.BinaryType, DataTypes.DateType, DataTypes.TimestampType, DataTypes.TimestampNTZType,
    DataTypes.createDecimalType(7, 2), DataTypes.createDecimalType(18, 0),
    DataTypes.createDecimalType(38, 10), DataTypes.createDecimalType(38, 0),
    DataTypes.createDecimalType(20, 19), DataTypes.StringType, DataTypes.IntegerType,
    DataTypes.DoubleType, DataTypes.LongType, new YearMonthIntervalType((byte) 0, (byte) 1),
    new DayTimeIntervalType((byte) 0, (byte) 3),
  };
  private static final double[] NULL_RATES = {0.0, 0.0, 0.05, 0.3, 0.9};

  final StructType schema;
  final double[] nullRates;
  /** Per column, the pool its values come from, or null for fully random values. */
  private final List<List<Object>> pools;

  private DiffSchema(StructType schema, double[] nullRates, List<List<Object>> pools) {
    this.schema = schema;
    this.nullRates = nullRates;
    this.pools = pools;
  }

  /** A schema of 2 to 6 columns; without interval columns where {@code forFiles}. */
  static DiffSchema random(SplittableRandom random, boolean forFiles) {
    int columns = 2 + random.nextInt(5);
    List<StructField> fields = new ArrayList<>();
    double[] nullRates = new double[columns];
    List<List<Object>> pools = new ArrayList<>();
    for (int i = 0; i < columns; i++) {
      DataType type;
      do {
        type = TYPES[random.nextInt(TYPES.length)];
      } while (forFiles && isInterval(type));
      nullRates[i] = NULL_RATES[random.nextInt(NULL_RATES.length)];
      fields.add(DataTypes.createStructField("c" + i, type, true));
      if (random.nextInt(3) == 0) {
        pools.add(null);
      } else {
        List<Object> pool = new ArrayList<>();
        int size = 1 + random.nextInt(8);
        for (int j = 0; j < size; j++) {
          pool.add(DiffValues.value(type, random));
        }
        pools.add(pool);
      }
    }
    return new DiffSchema(DataTypes.createStructType(fields), nullRates, pools);
  }

  /** {@code count} random rows of this schema. */
  List<Row> rows(SplittableRandom random, int count) {
    List<Row> rows = new ArrayList<>(count);
    for (int r = 0; r < count; r++) {
      Object[] values = new Object[schema.size()];
      for (int c = 0; c < values.length; c++) {
        if (random.nextDouble() < nullRates[c]) {
          continue;
        }
        List<Object> pool = pools.get(c);
        values[c] = pool == null ? DiffValues.value(type(c), random)
            : pool.get(random.nextInt(pool.size()));
      }
      rows.add(RowFactory.create(values));
    }
    return rows;
  }

  DataType type(int column) {
    return schema.fields()[column].dataType();
  }

  int size() {
    return schema.size();
  }

  static boolean isInterval(DataType type) {
    return type instanceof YearMonthIntervalType || type instanceof DayTimeIntervalType;
  }

  static boolean isFloating(DataType type) {
    return type instanceof FloatType || type instanceof DoubleType;
  }

  static boolean isDecimal(DataType type) {
    return type instanceof DecimalType;
  }

  /** The schema as a replay prints it: column, type, null rate, pool size or "random". */
  String describe() {
    StringBuilder text = new StringBuilder();
    for (int i = 0; i < schema.size(); i++) {
      text.append(i == 0 ? "" : ", ").append("c").append(i).append(' ')
          .append(type(i).simpleString()).append(" nulls=").append(nullRates[i])
          .append(pools.get(i) == null ? " random" : " pool=" + pools.get(i).size());
    }
    return text.toString();
  }
}
