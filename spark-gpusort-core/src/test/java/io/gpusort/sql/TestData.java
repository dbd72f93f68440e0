package io.gpusort.sql;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.lit;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.DynamicTest.dynamicTest;

import io.gpusort.GpuSort;
import io.gpusort.config.GpuSortConf;
import java.io.Serializable;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.math.BigInteger;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.time.Period;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;
import org.apache.spark.SparkContext;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.api.java.function.MapFunction;
import org.apache.spark.sql.AnalysisException;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.SortExec;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import scala.Function1;

/** Random frames with every key type, special values and unique row ids. */
final class TestData {
  static final StructType SCHEMA = schema();
  static final String P20 = "shared-prefix-20-byt";
  static final String P30 = "a-shared-prefix-of-thirty-byte";
  static final String P30_UTF8 = "日本語の共通の接頭辞";
  static final String P40 = "a-longer-shared-prefix-of-forty-bytes-xx";
  static final String[] STRING_PIECES = {"a", "b", "z", "A", "Z", "é", "É", "e", "日", "本", "😀",
      "\uFFFF", "\u0080", "\u0000", " ", "0", "~"};
  static final String[] STRING_SPECIALS = {"", "a", "A", "b", "é", "e", "日本", "日本語", "😀",
      "\uFFFF", "\uFFFF😀", "😀\uFFFF", "\u0000", "a\u0000", P20, P20 + "a", P30, P30 + "a",
      P30 + "b", P30 + "é", P30 + "\uFFFF", P30 + "😀", P30_UTF8, P30_UTF8 + "a", P40,
      P40 + "\u0000", P40 + "z"};
  static final float[] FLOAT_SPECIALS = {Float.intBitsToFloat(0x7fc00000),
      Float.intBitsToFloat(0x7f800001), Float.intBitsToFloat(0xffc00000),
      Float.intBitsToFloat(0x7fffffff), Float.intBitsToFloat(0xff800001), -0.0f, 0.0f,
      Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, Float.MIN_VALUE, -Float.MIN_VALUE,
      Float.MAX_VALUE, -Float.MAX_VALUE, Float.MIN_NORMAL, 1f, -1f};
  static final double[] DOUBLE_SPECIALS = {Double.longBitsToDouble(0x7ff8000000000000L),
      Double.longBitsToDouble(0x7ff0000000000001L), Double.longBitsToDouble(0xfff8000000000000L),
      Double.longBitsToDouble(0x7fffffffffffffffL), Double.longBitsToDouble(0xfff0000000000001L),
      -0.0, 0.0, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, Double.MIN_VALUE,
      -Double.MIN_VALUE, Double.MAX_VALUE, -Double.MAX_VALUE, Double.MIN_NORMAL, 1.0, -1.0};
  static final LocalDate[] DATE_SPECIALS = {LocalDate.of(1, 1, 1), LocalDate.of(1500, 3, 1),
      LocalDate.of(1582, 10, 4), LocalDate.of(1582, 10, 15), LocalDate.of(1969, 12, 31),
      LocalDate.of(1970, 1, 1), LocalDate.of(9999, 12, 31), LocalDate.of(10000, 1, 1),
      LocalDate.of(-5000, 1, 1), LocalDate.of(1_000_000, 1, 1),
      LocalDate.ofEpochDay(Integer.MIN_VALUE), LocalDate.ofEpochDay(Integer.MAX_VALUE)};
  /** Microseconds since the epoch, for timestamp and timestamp_ntz. */
  static final long[] MICROS_SPECIALS = {0, -1, 1, Long.MIN_VALUE, Long.MAX_VALUE,
      -62_135_596_800_000_000L, -14_819_716_800_000_000L, -12_219_292_800_000_000L,
      253_402_300_799_999_999L, 253_402_300_800_000_000L};
  static final long MICROS_YEAR_1 = -62_135_596_800_000_000L;
  static final long MICROS_YEAR_10000 = 253_402_300_800_000_000L;

  private TestData() {}

  static Dataset<Row> frame(Random r, int numRows, Distribution dist) {
    return SparkTestSession.get().createDataFrame(rows(r, numRows, dist), SCHEMA);
  }

  /**
   * A frame of {@code id}, {@code pay}, {@code key} and the columns the layouts partition by
   * ({@code k_bool}) plus a wide payload ({@code k_dec38}): cheaper to plan and run than
   * {@link #frame}.
   */
  static Dataset<Row> narrowFrame(Random r, int numRows, Distribution dist, KeyColumn key) {
    List<String> columns = new ArrayList<>(List.of("pay", "k_bool", "k_dec38", key.name));
    return frame(r, numRows, dist).select("id", columns.stream().distinct().toArray(String[]::new));
  }

  static List<Row> rows(Random r, int numRows, Distribution dist) {
    long mask = 0;
    for (int b = 0; b < 8; b++) {
      mask |= r.nextBoolean() ? 0xFFL << (8 * b) : 0;
    }
    List<Supplier<Object>> sources = new ArrayList<>();
    for (KeyColumn k : KeyColumn.values()) {
      sources.add(source(k, r, dist, mask));
    }
    List<Row> rows = new ArrayList<>(numRows);
    for (int i = 0; i < numRows; i++) {
      Object[] values = new Object[2 + sources.size()];
      values[0] = (long) i;
      values[1] = r.nextInt(10) == 0 ? null : "p" + r.nextInt(1000);
      for (int c = 0; c < sources.size(); c++) {
        values[2 + c] = sources.get(c).get();
      }
      rows.add(RowFactory.create(values));
    }
    return rows;
  }

  private static StructType schema() {
    StructType s = new StructType().add("id", DataTypes.LongType, false)
        .add("pay", DataTypes.StringType, true);
    for (KeyColumn k : KeyColumn.values()) {
      s = s.add(k.name, k.type, k.nullable());
    }
    return s;
  }

  private static Supplier<Object> source(KeyColumn k, Random r, Distribution dist, long mask) {
    Supplier<Object> mixed = () -> {
      double u = r.nextDouble();
      if (k.nullable() && u < 0.08) {
        return null;
      }
      return u < 0.35 ? special(k, r) : random(k, r, mask);
    };
    if (dist == Distribution.MIXED) {
      return mixed;
    }
    if (dist == Distribution.SKEWED) {
      Object common = mixed.get();
      return () -> r.nextInt(5) == 0 ? mixed.get() : common;
    }
    int poolSize = dist == Distribution.ALL_EQUAL ? 1 : 1 + r.nextInt(4);
    List<Object> pool = new ArrayList<>();
    for (int i = 0; i < poolSize; i++) {
      pool.add(mixed.get());
    }
    return () -> pool.get(r.nextInt(pool.size()));
  }

  private static Object special(KeyColumn k, Random r) {
    return switch (k) {
      case BOOLEAN -> r.nextBoolean();
      case BYTE -> pick(r, Byte.MIN_VALUE, Byte.MAX_VALUE, (byte) 0, (byte) -1, (byte) 1);
      case SHORT -> pick(r, Short.MIN_VALUE, Short.MAX_VALUE, (short) 0, (short) -1, (short) 1);
      case INT, INT_NOT_NULL -> pick(r, Integer.MIN_VALUE, Integer.MAX_VALUE, 0, -1, 1,
          Integer.MIN_VALUE + 1);
      case LONG -> pick(r, Long.MIN_VALUE, Long.MAX_VALUE, 0L, -1L, 1L, Long.MIN_VALUE + 1,
          (long) Integer.MIN_VALUE, (long) Integer.MAX_VALUE + 1);
      case FLOAT -> FLOAT_SPECIALS[r.nextInt(FLOAT_SPECIALS.length)];
      case DOUBLE -> DOUBLE_SPECIALS[r.nextInt(DOUBLE_SPECIALS.length)];
      case DATE -> DATE_SPECIALS[r.nextInt(DATE_SPECIALS.length)];
      case TIMESTAMP -> instant(MICROS_SPECIALS[r.nextInt(MICROS_SPECIALS.length)]);
      case TIMESTAMP_NTZ -> localDateTime(MICROS_SPECIALS[r.nextInt(MICROS_SPECIALS.length)]);
      case DEC_10_2, DEC_18_0, DEC_19_0, DEC_38_6 -> specialDecimal((DecimalType) k.type, r);
      case STRING, STRING_NOT_NULL -> STRING_SPECIALS[r.nextInt(STRING_SPECIALS.length)];
      case BINARY -> specialBinary(r);
    };
  }

  private static Object random(KeyColumn k, Random r, long mask) {
    return switch (k) {
      case BOOLEAN -> r.nextBoolean();
      case BYTE -> (byte) r.nextInt();
      case SHORT -> (short) r.nextInt();
      case INT, INT_NOT_NULL -> (int) randomLong(r, mask);
      case LONG -> randomLong(r, mask);
      case FLOAT -> r.nextBoolean() ? Float.intBitsToFloat(r.nextInt())
          : (float) (r.nextGaussian() * Math.pow(10, r.nextInt(-3, 4)));
      case DOUBLE -> r.nextBoolean() ? Double.longBitsToDouble(r.nextLong())
          : r.nextGaussian() * Math.pow(10, r.nextInt(-3, 4));
      case DATE -> LocalDate.ofEpochDay(r.nextInt(4) == 0 ? r.nextInt()
          : r.nextInt(-719_162, 2_932_897));
      case TIMESTAMP -> instant(randomMicros(r));
      case TIMESTAMP_NTZ -> localDateTime(randomMicros(r));
      case DEC_10_2, DEC_18_0, DEC_19_0, DEC_38_6 -> randomDecimal((DecimalType) k.type, r);
      case STRING, STRING_NOT_NULL -> randomString(r);
      case BINARY -> randomBinary(r);
    };
  }

  @SafeVarargs
  private static <T> T pick(Random r, T... values) {
    return values[r.nextInt(values.length)];
  }

  /** Full range, small magnitudes, or random bytes under a per-frame mask (constant digits). */
  private static long randomLong(Random r, long mask) {
    return switch (r.nextInt(3)) {
      case 0 -> r.nextLong();
      case 1 -> r.nextInt(-100, 100);
      default -> r.nextLong() & mask;
    };
  }

  private static long randomMicros(Random r) {
    return r.nextInt(4) == 0 ? r.nextLong() : r.nextLong(MICROS_YEAR_1, MICROS_YEAR_10000);
  }

  private static Instant instant(long micros) {
    return Instant.EPOCH.plus(micros, ChronoUnit.MICROS);
  }

  private static LocalDateTime localDateTime(long micros) {
    return LocalDateTime.ofEpochSecond(Math.floorDiv(micros, 1_000_000L),
        (int) Math.floorMod(micros, 1_000_000L) * 1000, ZoneOffset.UTC);
  }

  private static BigDecimal specialDecimal(DecimalType t, Random r) {
    BigInteger max = BigInteger.TEN.pow(t.precision()).subtract(BigInteger.ONE);
    List<BigInteger> unscaled = new ArrayList<>(List.of(max, max.negate(), BigInteger.ZERO,
        BigInteger.ONE, BigInteger.ONE.negate(), BigInteger.TEN.pow(t.scale()),
        max.subtract(BigInteger.ONE)));
    for (long v : new long[] {Long.MAX_VALUE, Long.MIN_VALUE}) {
      BigInteger b = BigInteger.valueOf(v);
      unscaled.add(b.abs().compareTo(max) <= 0 ? b : BigInteger.TWO);
      unscaled.add(b.add(BigInteger.ONE).abs().compareTo(max) <= 0 ? b.add(BigInteger.ONE)
          : BigInteger.TWO);
    }
    return new BigDecimal(unscaled.get(r.nextInt(unscaled.size())), t.scale());
  }

  private static BigDecimal randomDecimal(DecimalType t, Random r) {
    int digits = 1 + r.nextInt(t.precision());
    StringBuilder sb = new StringBuilder(r.nextBoolean() ? "-" : "");
    for (int i = 0; i < digits; i++) {
      sb.append((char) ('0' + r.nextInt(10)));
    }
    return new BigDecimal(new BigInteger(sb.toString()), t.scale());
  }

  private static String randomString(Random r) {
    StringBuilder sb = new StringBuilder();
    if (r.nextBoolean()) {
      sb.append(pick(r, P20, P30, P30_UTF8, P40));
    }
    int n = r.nextInt(sb.length() > 0 ? 4 : 7);
    for (int i = 0; i < n; i++) {
      sb.append(STRING_PIECES[r.nextInt(STRING_PIECES.length)]);
    }
    return sb.toString();
  }

  private static byte[] specialBinary(Random r) {
    byte[] prefix = sharedBinaryPrefix();
    return switch (r.nextInt(10)) {
      case 0 -> new byte[0];
      case 1 -> new byte[] {0};
      case 2 -> new byte[] {0x7f};
      case 3 -> new byte[] {(byte) 0x80};
      case 4 -> new byte[] {(byte) 0xff};
      case 5 -> new byte[] {(byte) 0xff, (byte) 0xff};
      case 6 -> prefix;
      default -> concat(prefix, new byte[] {pick(r, (byte) 0, (byte) 0x7f, (byte) 0x80, (byte) 0xff)});
    };
  }

  private static byte[] randomBinary(Random r) {
    byte[] head = r.nextBoolean() ? sharedBinaryPrefix() : new byte[0];
    byte[] tail = new byte[r.nextInt(head.length > 0 ? 4 : 9)];
    for (int i = 0; i < tail.length; i++) {
      tail[i] = r.nextBoolean() ? (byte) r.nextInt()
          : pick(r, (byte) 0, (byte) 0x7f, (byte) 0x80, (byte) 0xff);
    }
    return concat(head, tail);
  }

  /** 32 bytes, most of them at or above 0x80, shared by many binaries. */
  private static byte[] sharedBinaryPrefix() {
    byte[] prefix = new byte[32];
    for (int i = 0; i < prefix.length; i++) {
      prefix[i] = (byte) (0x80 + 3 * i);
    }
    return prefix;
  }

  private static byte[] concat(byte[] a, byte[] b) {
    byte[] out = Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }

  /** How key values repeat within a frame. */
  enum Distribution {
    /** Specials, nulls and random values: few ties. */
    MIXED,
    /** Each column draws from 1 to 4 values: ties in every key column, runs of equal keys. */
    FEW_DISTINCT,
    /** Each column holds one value: every row's key is equal. */
    ALL_EQUAL,
    /** Each column holds one value in about 80% of rows, mixed values in the rest. */
    SKEWED
  }

  /** The key columns of every generated frame, after {@code id} (unique) and {@code pay}. */
  enum KeyColumn {
    BOOLEAN("k_bool", DataTypes.BooleanType),
    BYTE("k_byte", DataTypes.ByteType),
    SHORT("k_short", DataTypes.ShortType),
    INT("k_int", DataTypes.IntegerType),
    LONG("k_long", DataTypes.LongType),
    FLOAT("k_float", DataTypes.FloatType),
    DOUBLE("k_double", DataTypes.DoubleType),
    DATE("k_date", DataTypes.DateType),
    TIMESTAMP("k_ts", DataTypes.TimestampType),
    TIMESTAMP_NTZ("k_ntz", DataTypes.TimestampNTZType),
    DEC_10_2("k_dec10", DataTypes.createDecimalType(10, 2)),
    DEC_18_0("k_dec18", DataTypes.createDecimalType(18, 0)),
    DEC_19_0("k_dec19", DataTypes.createDecimalType(19, 0)),
    DEC_38_6("k_dec38", DataTypes.createDecimalType(38, 6)),
    STRING("k_str", DataTypes.StringType),
    BINARY("k_bin", DataTypes.BinaryType),
    INT_NOT_NULL("k_int_nn", DataTypes.IntegerType),
    STRING_NOT_NULL("k_str_nn", DataTypes.StringType);

    final String name;
    final DataType type;

    KeyColumn(String name, DataType type) {
      this.name = name;
      this.type = type;
    }

    boolean nullable() {
      return this != INT_NOT_NULL && this != STRING_NOT_NULL;
    }
  }
}
