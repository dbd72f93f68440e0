package io.gpusort.sql.diff;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.Period;
import java.time.ZoneOffset;
import java.util.SplittableRandom;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.DayTimeIntervalType;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.TimestampNTZType;
import org.apache.spark.sql.types.TimestampType;
import org.apache.spark.sql.types.YearMonthIntervalType;

/**
 * Random values of one atomic Spark type, as the Java objects Spark's row encoder takes with
 * {@code spark.sql.datetime.java8API.enabled=true}. About a third of the values are the type's
 * edge values (MIN/MAX, NaN payloads, -0.0, infinities, empty and long-prefix strings, bytes
 * 0x00 and 0xFF), because those are where a key encoding goes wrong.
 *
 * <p>NaN payloads reach the sort from local rows and the cache, whose bits Spark and its sort keep
 * (checked with the replacement off: payload and sign come back as they went in); Spark's
 * Parquet writer stores every NaN as the canonical one, so file inputs hold no payloads.
 */
final class DiffValues {
  /** A shared prefix longer than any string-prefix setting, so that ties go to the host. */
  private static final String LONG_PREFIX = "gpusort-differential-prefix-0123456789-abcdefgh/";
  private static final double EDGE_SHARE = 0.35;
  /** Days of 0001-01-01 and 9999-12-31: Spark's supported range of dates. */
  private static final long MIN_DAY = LocalDate.of(1, 1, 1).toEpochDay();
  private static final long MAX_DAY = LocalDate.of(9999, 12, 31).toEpochDay();

  private DiffValues() {}

  /** One non-null value of {@code type}. */
  static Object value(DataType type, SplittableRandom random) {
    boolean edge = random.nextDouble() < EDGE_SHARE;
    if (type instanceof BooleanType) {
      return random.nextBoolean();
    } else if (type instanceof ByteType) {
      return (byte) integral(random, edge, Byte.MIN_VALUE, Byte.MAX_VALUE);
    } else if (type instanceof ShortType) {
      return (short) integral(random, edge, Short.MIN_VALUE, Short.MAX_VALUE);
    } else if (type instanceof IntegerType) {
      return (int) integral(random, edge, Integer.MIN_VALUE, Integer.MAX_VALUE);
    } else if (type instanceof LongType) {
      return integral(random, edge, Long.MIN_VALUE, Long.MAX_VALUE);
    } else if (type instanceof FloatType) {
      return edge ? floatEdge(random) : (float) ((random.nextDouble() - 0.5) * 2e4);
    } else if (type instanceof DoubleType) {
      return edge ? doubleEdge(random) : (random.nextDouble() - 0.5) * 2e9;
    } else if (type instanceof DecimalType decimal) {
      return decimal(decimal, random, edge);
    } else if (type instanceof StringType) {
      return string(random, edge);
    } else if (type instanceof BinaryType) {
      return binary(random, edge);
    } else if (type instanceof DateType) {
      return LocalDate.ofEpochDay(day(random, edge));
    } else if (type instanceof TimestampType) {
      return Instant.ofEpochSecond(0, micros(random, edge) * 1000L);
    } else if (type instanceof TimestampNTZType) {
      long micros = micros(random, edge);
      return LocalDateTime.ofEpochSecond(Math.floorDiv(micros, 1_000_000L),
          (int) Math.floorMod(micros, 1_000_000L) * 1000, ZoneOffset.UTC);
    } else if (type instanceof YearMonthIntervalType) {
      int months = edge ? pick(random, 0, -1, 1, 12, -12, 1_000_000, -1_000_000)
          : random.nextInt(-5000, 5000);
      return Period.ofMonths(months).normalized();
    } else if (type instanceof DayTimeIntervalType) {
      long micros = edge ? pick(random, 0L, -1L, 1L, 86_400_000_000L, -86_400_000_000L)
          : random.nextLong(-1_000_000_000_000L, 1_000_000_000_000L);
      return Duration.ofNanos(micros * 1000L);
    }
    throw new IllegalArgumentException("no values for " + type);
  }

  private static long integral(SplittableRandom random, boolean edge, long min, long max) {
    if (edge) {
      return pick(random, min, max, min + 1, max - 1, 0L, -1L, 1L);
    }
    // Mostly small numbers, so that keys tie and ordering within equal keys matters.
    long bound = random.nextBoolean() ? 100 : Math.min(max, 1L << 40);
    return Math.max(min, Math.min(max, random.nextLong(-bound, bound + 1)));
  }

  private static float floatEdge(SplittableRandom random) {
    return pick(random, Float.NaN, Float.intBitsToFloat(0x7fc00001),
        Float.intBitsToFloat(0xffc00000), Float.intBitsToFloat(0x7f800001),
        Float.intBitsToFloat(0xffffffff), -0.0f, 0.0f, Float.POSITIVE_INFINITY,
        Float.NEGATIVE_INFINITY, Float.MIN_VALUE, -Float.MIN_VALUE, Float.MAX_VALUE,
        -Float.MAX_VALUE, Float.MIN_NORMAL, 1.0f, -1.0f);
  }

  private static double doubleEdge(SplittableRandom random) {
    return pick(random, Double.NaN, Double.longBitsToDouble(0x7ff8000000000001L),
        Double.longBitsToDouble(0xfff8000000000000L), Double.longBitsToDouble(0x7ff0000000000001L),
        Double.longBitsToDouble(0xffffffffffffffffL), -0.0, 0.0, Double.POSITIVE_INFINITY,
        Double.NEGATIVE_INFINITY, Double.MIN_VALUE, -Double.MIN_VALUE, Double.MAX_VALUE,
        -Double.MAX_VALUE, Double.MIN_NORMAL, 1.0, -1.0);
  }

  private static BigDecimal decimal(DecimalType type, SplittableRandom random, boolean edge) {
    int precision = type.precision();
    int scale = type.scale();
    BigInteger max = BigInteger.TEN.pow(precision).subtract(BigInteger.ONE);
    BigInteger unscaled;
    if (edge) {
      unscaled = pick(random, max, max.negate(), BigInteger.ZERO, BigInteger.ONE,
          BigInteger.ONE.negate(), max.subtract(BigInteger.ONE));
    } else {
      int digits = 1 + random.nextInt(precision);
      BigInteger bound = BigInteger.TEN.pow(digits);
      unscaled = new BigInteger(bound.bitLength() + 8, new java.util.Random(random.nextLong()))
          .mod(bound);
      if (random.nextBoolean()) {
        unscaled = unscaled.negate();
      }
    }
    return new BigDecimal(unscaled, scale);
  }

  private static String string(SplittableRandom random, boolean edge) {
    if (edge) {
      return pick(random, "", " ", "\u0000", "\u00ff", "\uffff", "\ud83d\ude00", "A", "a",
          LONG_PREFIX, LONG_PREFIX + "\u0000", LONG_PREFIX + "\u00ff\u00fe",
          LONG_PREFIX + LONG_PREFIX, "\u00e9t\u00e9", "\u0130", "ß");
    }
    StringBuilder text = new StringBuilder();
    if (random.nextInt(3) == 0) {
      text.append(LONG_PREFIX, 0, random.nextInt(LONG_PREFIX.length() + 1));
    }
    int length = random.nextInt(6);
    for (int i = 0; i < length; i++) {
      int kind = random.nextInt(10);
      // Mostly a few letters (ties), sometimes bytes above 0x7f in UTF-8 and supplementary chars.
      if (kind < 7) {
        text.append((char) ('a' + random.nextInt(4) + (random.nextInt(4) == 0 ? 'A' - 'a' : 0)));
      } else if (kind < 9) {
        text.append((char) (0x80 + random.nextInt(0x780)));
      } else {
        text.appendCodePoint(0x1F600 + random.nextInt(16));
      }
    }
    return text.toString();
  }

  private static byte[] binary(SplittableRandom random, boolean edge) {
    int length = edge ? pick(random, 0, 1, 17, 40) : random.nextInt(6);
    byte[] bytes = new byte[length];
    for (int i = 0; i < length; i++) {
      int kind = random.nextInt(4);
      bytes[i] = (byte) (kind == 0 ? 0 : kind == 1 ? 0xff : random.nextInt(256));
    }
    if (edge && length > 16) {
      // A long shared prefix: the rest decides the order.
      java.util.Arrays.fill(bytes, 0, 16, (byte) 0x80);
    }
    return bytes;
  }

  private static long day(SplittableRandom random, boolean edge) {
    if (edge) {
      return pick(random, MIN_DAY, MAX_DAY, 0L, -1L, 1L,
          LocalDate.of(1582, 10, 4).toEpochDay(), LocalDate.of(1582, 10, 15).toEpochDay());
    }
    return random.nextBoolean() ? random.nextLong(-400, 400) : random.nextLong(MIN_DAY, MAX_DAY);
  }

  private static long micros(SplittableRandom random, boolean edge) {
    long minMicros = MIN_DAY * 86_400_000_000L;
    long maxMicros = (MAX_DAY + 1) * 86_400_000_000L - 1;
    if (edge) {
      return pick(random, minMicros, maxMicros, 0L, -1L, 1L, 1_000_000L);
    }
    return random.nextBoolean() ? random.nextLong(-5_000_000, 5_000_000)
        : random.nextLong(minMicros, maxMicros);
  }

  @SafeVarargs
  static <T> T pick(SplittableRandom random, T... choices) {
    return choices[random.nextInt(choices.length)];
  }
}
