package io.gpusort.keys;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.gpusort.TestSeeds;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.ToLongFunction;
import org.apache.spark.sql.catalyst.util.SQLOrderingUtil;
import org.junit.jupiter.api.Test;

/**
 * Checks every {@link OrderedBits} encoder against the comparison Spark itself uses: the sign of
 * the unsigned comparison of two encodings must be the sign of Spark's comparison of the values,
 * over special values (NaN bit patterns, -0.0, infinities, MIN/MAX) and many random ones.
 *
 * <p>Seeded from {@code gpusort.test.seed} when set, randomly otherwise; failures name the seed.
 */
class OrderedBitsTest {
  private static final long SEED = TestSeeds.baseSeed();
  private static final int RANDOM_VALUES = 3000;
  private static final int RANDOM_PAIRS = 200_000;

  /** NaNs as several bit patterns: quiet, signalling, all-ones payload, and negative-sign ones. */
  private static final long[] DOUBLE_NAN_BITS = {
      0x7ff8000000000000L, 0x7ff0000000000001L, 0x7fffffffffffffffL, 0x7ff8000000000001L,
      0xfff8000000000000L, 0xfff8000000000001L, 0xfff0000000000001L, 0xffffffffffffffffL};
  private static final int[] FLOAT_NAN_BITS = {
      0x7fc00000, 0x7f800001, 0x7fffffff, 0x7fc00001, 0xffc00000, 0xffc00001, 0xff800001,
      0xffffffff};

  private static final double[] DOUBLE_SPECIALS = {
      0.0, -0.0, 1.0, -1.0, Double.MIN_VALUE, -Double.MIN_VALUE, Double.MIN_NORMAL,
      -Double.MIN_NORMAL, Double.MAX_VALUE, -Double.MAX_VALUE, Double.POSITIVE_INFINITY,
      Double.NEGATIVE_INFINITY, Math.nextDown(Double.MIN_NORMAL), 0.5, -0.5, 1e300, -1e300,
      Math.nextUp(1.0), Math.nextDown(-1.0), Long.MAX_VALUE, Long.MIN_VALUE};
  private static final float[] FLOAT_SPECIALS = {
      0.0f, -0.0f, 1.0f, -1.0f, Float.MIN_VALUE, -Float.MIN_VALUE, Float.MIN_NORMAL,
      -Float.MIN_NORMAL, Float.MAX_VALUE, -Float.MAX_VALUE, Float.POSITIVE_INFINITY,
      Float.NEGATIVE_INFINITY, Math.nextDown(Float.MIN_NORMAL), 0.5f, -0.5f, 1e30f, -1e30f,
      Math.nextUp(1.0f), Math.nextDown(-1.0f)};

  @Test
  void doublesFollowSparkOrder() {
    SplittableRandom random = new SplittableRandom(SEED);
    List<Double> values = doubleValues(random);
    checkPairs("double", values, random, d -> OrderedBits.ofDouble(d), 64,
        (a, b) -> SQLOrderingUtil.compareDoubles(a, b));
  }

  @Test
  void floatsFollowSparkOrder() {
    SplittableRandom random = new SplittableRandom(SEED + 1);
    List<Float> values = floatValues(random);
    checkPairs("float", values, random, f -> OrderedBits.ofFloat(f), 32,
        (a, b) -> SQLOrderingUtil.compareFloats(a, b));
  }

  @Test
  void doubleInfinitiesAndNaNsAreAtTheEnds() {
    SplittableRandom random = new SplittableRandom(SEED + 2);
    long negInf = OrderedBits.ofDouble(Double.NEGATIVE_INFINITY);
    long posInf = OrderedBits.ofDouble(Double.POSITIVE_INFINITY);
    for (double d : doubleValues(random)) {
      if (Double.isNaN(d) || Double.isInfinite(d)) {
        continue;
      }
      long e = OrderedBits.ofDouble(d);
      assertTrue(Long.compareUnsigned(negInf, e) < 0,
          "-Infinity must encode below finite " + d + TestSeeds.rerunHint(SEED));
      assertTrue(Long.compareUnsigned(e, posInf) < 0,
          "+Infinity must encode above finite " + d + TestSeeds.rerunHint(SEED));
    }
    long nan = OrderedBits.ofDouble(Double.NaN);
    for (long bits : DOUBLE_NAN_BITS) {
      double v = Double.longBitsToDouble(bits);
      assertTrue(Double.isNaN(v));
      assertEquals(nan, OrderedBits.ofDouble(v),
          "every NaN must encode alike: 0x" + Long.toHexString(bits));
      assertTrue(Long.compareUnsigned(posInf, OrderedBits.ofDouble(v)) < 0,
          "NaN 0x" + Long.toHexString(bits) + " must encode above +Infinity");
    }
    assertEquals(OrderedBits.ofDouble(0.0), OrderedBits.ofDouble(-0.0), "-0.0 must equal 0.0");
  }

  @Test
  void floatInfinitiesAndNaNsAreAtTheEnds() {
    SplittableRandom random = new SplittableRandom(SEED + 3);
    long negInf = OrderedBits.ofFloat(Float.NEGATIVE_INFINITY);
    long posInf = OrderedBits.ofFloat(Float.POSITIVE_INFINITY);
    for (float f : floatValues(random)) {
      if (Float.isNaN(f) || Float.isInfinite(f)) {
        continue;
      }
      long e = OrderedBits.ofFloat(f);
      assertTrue(Long.compareUnsigned(negInf, e) < 0,
          "-Infinity must encode below finite " + f + TestSeeds.rerunHint(SEED));
      assertTrue(Long.compareUnsigned(e, posInf) < 0,
          "+Infinity must encode above finite " + f + TestSeeds.rerunHint(SEED));
    }
    long nan = OrderedBits.ofFloat(Float.NaN);
    for (int bits : FLOAT_NAN_BITS) {
      float v = Float.intBitsToFloat(bits);
      assertTrue(Float.isNaN(v));
      assertEquals(nan, OrderedBits.ofFloat(v),
          "every NaN must encode alike: 0x" + Integer.toHexString(bits));
      assertTrue(Long.compareUnsigned(posInf, OrderedBits.ofFloat(v)) < 0,
          "NaN 0x" + Integer.toHexString(bits) + " must encode above +Infinity");
    }
    assertEquals(OrderedBits.ofFloat(0.0f), OrderedBits.ofFloat(-0.0f), "-0.0 must equal 0.0");
  }

  @Test
  void toDoubleRoundTrips() {
    SplittableRandom random = new SplittableRandom(SEED + 4);
    for (double d : doubleValues(random)) {
      double back = OrderedBits.toDouble(OrderedBits.ofDouble(d));
      if (Double.isNaN(d)) {
        assertTrue(Double.isNaN(back), "NaN must come back as NaN" + TestSeeds.rerunHint(SEED));
      } else if (d == 0.0) {
        assertEquals(0, SQLOrderingUtil.compareDoubles(0.0, back), "zero must come back as zero");
      } else {
        assertEquals(Double.doubleToRawLongBits(d), Double.doubleToRawLongBits(back),
            "round trip of " + d + TestSeeds.rerunHint(SEED));
      }
    }
  }

  @Test
  void bytesFollowByteCompareExhaustively() {
    for (int a = Byte.MIN_VALUE; a <= Byte.MAX_VALUE; a++) {
      long ea = OrderedBits.ofByte((byte) a);
      assertFits("byte", ea, KeyKind.BYTE.fixedBits());
      for (int b = Byte.MIN_VALUE; b <= Byte.MAX_VALUE; b++) {
        int expected = Byte.compare((byte) a, (byte) b);
        int actual = Long.compareUnsigned(ea, OrderedBits.ofByte((byte) b));
        if (Integer.signum(expected) != Integer.signum(actual)) {
          fail("byte " + a + " vs " + b + ": Spark " + expected + ", encoding " + actual);
        }
      }
    }
  }

  @Test
  void shortsAreStrictlyIncreasingExhaustively() {
    // Comparing consecutive values of the whole domain is equivalent to comparing every pair.
    long previous = -1;
    for (int v = Short.MIN_VALUE; v <= Short.MAX_VALUE; v++) {
      long e = OrderedBits.ofShort((short) v);
      assertFits("short", e, KeyKind.SHORT.fixedBits());
      if (v > Short.MIN_VALUE && Long.compareUnsigned(previous, e) >= 0) {
        fail("short " + (v - 1) + " does not encode below " + v);
      }
      previous = e;
    }
  }

  @Test
  void intsFollowIntegerCompare() {
    SplittableRandom random = new SplittableRandom(SEED + 5);
    List<Integer> values = new ArrayList<>(List.of(Integer.MIN_VALUE, Integer.MIN_VALUE + 1, -1,
        0, 1, Integer.MAX_VALUE - 1, Integer.MAX_VALUE, 0x7f, 0x80, 0xff, 0x100, -0x80, -0x81));
    for (int i = 0; i < RANDOM_VALUES; i++) {
      int bits = random.nextInt();
      values.add(random.nextBoolean() ? bits : bits >> random.nextInt(32));
    }
    checkPairs("int", values, random, v -> OrderedBits.ofInt(v), KeyKind.INT.fixedBits(),
        Integer::compare);
  }

  @Test
  void longsFollowLongCompare() {
    SplittableRandom random = new SplittableRandom(SEED + 6);
    List<Long> values = new ArrayList<>(List.of(Long.MIN_VALUE, Long.MIN_VALUE + 1, -1L, 0L, 1L,
        Long.MAX_VALUE - 1, Long.MAX_VALUE, (long) Integer.MIN_VALUE, (long) Integer.MAX_VALUE,
        0xffffffffL, -0x100000000L));
    for (int i = 0; i < RANDOM_VALUES; i++) {
      long bits = random.nextLong();
      values.add(random.nextBoolean() ? bits : bits >> random.nextInt(64));
    }
    checkPairs("long", values, random, v -> OrderedBits.ofLong(v), KeyKind.LONG.fixedBits(),
        Long::compare);
  }

  @Test
  void int128HighWordFollowsSignedCompare() {
    SplittableRandom random = new SplittableRandom(SEED + 7);
    List<Long> values = new ArrayList<>(List.of(Long.MIN_VALUE, -1L, 0L, 1L, Long.MAX_VALUE));
    for (int i = 0; i < RANDOM_VALUES; i++) {
      values.add(random.nextLong() >> random.nextInt(64));
    }
    checkPairs("int128 high word", values, random, v -> OrderedBits.ofInt128High(v), 64,
        Long::compare);
  }

  @Test
  void booleansFollowBooleanCompare() {
    boolean[] values = {false, true};
    for (boolean a : values) {
      assertFits("boolean", OrderedBits.ofBoolean(a), KeyKind.BOOLEAN.fixedBits());
      for (boolean b : values) {
        assertEquals(Integer.signum(Boolean.compare(a, b)),
            Integer.signum(Long.compareUnsigned(OrderedBits.ofBoolean(a), OrderedBits.ofBoolean(b))),
            "boolean " + a + " vs " + b);
      }
    }
  }

  @Test
  void prefixWordIsTheZeroPaddedFirstEightBytesUnsigned() {
    SplittableRandom random = new SplittableRandom(SEED + 8);
    List<byte[]> values = new ArrayList<>();
    values.add(new byte[0]);
    values.add(new byte[] {0});
    values.add(new byte[] {(byte) 0xff});
    values.add(new byte[] {0x7f});
    values.add(new byte[] {(byte) 0x80});
    byte[] alphabet = {0, 1, 0x41, 0x7f, (byte) 0x80, (byte) 0x81, (byte) 0xc3, (byte) 0xfe,
        (byte) 0xff};
    for (int i = 0; i < RANDOM_VALUES; i++) {
      byte[] v = new byte[random.nextInt(13)];
      for (int j = 0; j < v.length; j++) {
        v[j] = random.nextInt(4) == 0 ? (byte) random.nextInt(256)
            : alphabet[random.nextInt(alphabet.length)];
      }
      values.add(v);
    }
    for (int p = 0; p < RANDOM_PAIRS; p++) {
      byte[] a = values.get(random.nextInt(values.size()));
      byte[] b = values.get(random.nextInt(values.size()));
      int expected = Arrays.compareUnsigned(padded(a), padded(b));
      long ea = OrderedBits.prefixWord(a, 0, a.length);
      long eb = OrderedBits.prefixWord(b, 0, b.length);
      int actual = Long.compareUnsigned(ea, eb);
      if (Integer.signum(expected) != Integer.signum(actual)) {
        fail("prefixWord of " + Arrays.toString(a) + " vs " + Arrays.toString(b) + ": expected "
            + expected + ", got " + actual + TestSeeds.rerunHint(SEED));
      }
      // A strict difference of prefixes is a strict difference of the full values.
      if (actual != 0 && Integer.signum(actual) != Integer.signum(Arrays.compareUnsigned(a, b))) {
        fail("prefixWord order of " + Arrays.toString(a) + " vs " + Arrays.toString(b)
            + " contradicts the full byte order" + TestSeeds.rerunHint(SEED));
      }
    }
  }

  @Test
  void prefixWordReadsOnlyTheGivenRange() {
    byte[] bytes = {(byte) 0xff, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, (byte) 0x88,
        (byte) 0x99, (byte) 0xaa};
    assertEquals(0x1122330000000000L, OrderedBits.prefixWord(bytes, 1, 3));
    assertEquals(0x1122334455667788L, OrderedBits.prefixWord(bytes, 1, 10));
    assertEquals(0xff11223344556677L, OrderedBits.prefixWord(bytes, 0, 8));
    assertEquals(0L, OrderedBits.prefixWord(bytes, 4, 0));
    assertEquals(0L, OrderedBits.prefixWord(bytes, 4, -5));
    assertEquals(0xaa00000000000000L, OrderedBits.prefixWord(bytes, 10, 1));
  }

  @Test
  void fixedBitsOfEveryKind() {
    assertEquals(0, KeyKind.NULL.fixedBits());
    assertEquals(1, KeyKind.BOOLEAN.fixedBits());
    assertEquals(8, KeyKind.BYTE.fixedBits());
    assertEquals(16, KeyKind.SHORT.fixedBits());
    assertEquals(32, KeyKind.INT.fixedBits());
    assertEquals(64, KeyKind.LONG.fixedBits());
    assertEquals(32, KeyKind.FLOAT.fixedBits());
    assertEquals(64, KeyKind.DOUBLE.fixedBits());
    assertEquals(128, KeyKind.INT128.fixedBits());
    assertTrue(!KeyKind.BYTES.isFixedWidth());
  }

  /** A comparator on boxed values; named so that both int- and Integer-returning forms fit. */
  private interface Reference<T> {
    int compare(T a, T b);
  }

  /**
   * Checks every pair among the first special values, then random pairs of all values, and that
   * each encoding fits in {@code bits} bits.
   */
  private static <T> void checkPairs(String type, List<T> values, SplittableRandom random,
      ToLongFunction<T> encode, int bits, Reference<T> reference) {
    long[] encoded = new long[values.size()];
    for (int i = 0; i < values.size(); i++) {
      encoded[i] = encode.applyAsLong(values.get(i));
      assertFits(type + " " + values.get(i), encoded[i], bits);
    }
    int exhaustive = Math.min(values.size(), 400);
    for (int i = 0; i < exhaustive; i++) {
      for (int j = 0; j < exhaustive; j++) {
        checkPair(type, values, encoded, reference, i, j);
      }
    }
    for (int p = 0; p < RANDOM_PAIRS; p++) {
      checkPair(type, values, encoded, reference, random.nextInt(values.size()),
          random.nextInt(values.size()));
    }
  }

  private static <T> void checkPair(String type, List<T> values, long[] encoded,
      Reference<T> reference, int i, int j) {
    int expected = Integer.signum(reference.compare(values.get(i), values.get(j)));
    int actual = Integer.signum(Long.compareUnsigned(encoded[i], encoded[j]));
    if (expected != actual) {
      fail(type + " " + describe(values.get(i)) + " vs " + describe(values.get(j))
          + ": Spark compares " + expected + ", encodings 0x" + Long.toHexString(encoded[i])
          + " vs 0x" + Long.toHexString(encoded[j]) + " compare " + actual + TestSeeds.rerunHint(SEED));
    }
  }

  private static String describe(Object v) {
    if (v instanceof Double d) {
      return d + " (0x" + Long.toHexString(Double.doubleToRawLongBits(d)) + ")";
    }
    if (v instanceof Float f) {
      return f + " (0x" + Integer.toHexString(Float.floatToRawIntBits(f)) + ")";
    }
    return String.valueOf(v);
  }

  private static void assertFits(String what, long encoded, int bits) {
    if (bits < 64 && (encoded >>> bits) != 0) {
      fail(what + " encodes to 0x" + Long.toHexString(encoded) + ", wider than " + bits
          + " bits");
    }
  }

  private static List<Double> doubleValues(SplittableRandom random) {
    List<Double> values = new ArrayList<>();
    for (double d : DOUBLE_SPECIALS) {
      values.add(d);
    }
    for (long bits : DOUBLE_NAN_BITS) {
      values.add(Double.longBitsToDouble(bits));
    }
    for (int i = 0; i < RANDOM_VALUES; i++) {
      switch (random.nextInt(3)) {
        case 0 -> values.add(Double.longBitsToDouble(random.nextLong()));
        case 1 -> values.add((random.nextDouble() - 0.5) * Math.pow(10, random.nextInt(-20, 20)));
        default -> values.add((double) (random.nextInt(7) - 3));
      }
    }
    return values;
  }

  private static List<Float> floatValues(SplittableRandom random) {
    List<Float> values = new ArrayList<>();
    for (float f : FLOAT_SPECIALS) {
      values.add(f);
    }
    for (int bits : FLOAT_NAN_BITS) {
      values.add(Float.intBitsToFloat(bits));
    }
    for (int i = 0; i < RANDOM_VALUES; i++) {
      switch (random.nextInt(3)) {
        case 0 -> values.add(Float.intBitsToFloat(random.nextInt()));
        case 1 -> values.add((float) ((random.nextDouble() - 0.5)
            * Math.pow(10, random.nextInt(-10, 10))));
        default -> values.add((float) (random.nextInt(7) - 3));
      }
    }
    return values;
  }

  private static byte[] padded(byte[] v) {
    return Arrays.copyOf(v, 8);
  }
}
