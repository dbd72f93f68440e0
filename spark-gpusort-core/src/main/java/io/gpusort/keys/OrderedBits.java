package io.gpusort.keys;

/**
 * Order-preserving encodings of single values into unsigned integers: for values {@code a} and
 * {@code b} of one type, {@code a} sorts before {@code b} in Spark's order exactly when the
 * encoding of {@code a} is smaller as an unsigned number, and they are equal in Spark's order
 * exactly when their encodings are equal. Each method returns the encoding in the low
 * {@code width} bits of a long (the width of the type; see {@link KeyKind}).
 *
 * <p>Floating point follows Spark, not IEEE total order: -0.0 equals 0.0, every NaN equals every
 * other NaN and sorts above +Infinity, and -Infinity sorts below every other number. (Encoding the
 * raw bits with only the sign bit flipped sends negative numbers, -Infinity among them, to the
 * top: the negative half has to be inverted as a whole.)
 */
public final class OrderedBits {
  private static final int CANONICAL_FLOAT_NAN = 0x7fc00000;
  private static final long CANONICAL_DOUBLE_NAN = 0x7ff8000000000000L;

  private OrderedBits() {}

  public static long ofBoolean(boolean value) {
    return value ? 1 : 0;
  }

  public static long ofByte(byte value) {
    return (value ^ 0x80) & 0xFFL;
  }

  public static long ofShort(short value) {
    return (value ^ 0x8000) & 0xFFFFL;
  }

  public static long ofInt(int value) {
    return (value ^ 0x80000000) & 0xFFFFFFFFL;
  }

  public static long ofLong(long value) {
    return value ^ Long.MIN_VALUE;
  }

  public static long ofFloat(float value) {
    int bits;
    if (value != value) {
      bits = CANONICAL_FLOAT_NAN;
    } else if (value == 0.0f) {
      bits = 0; // -0.0 equals 0.0
    } else {
      bits = Float.floatToRawIntBits(value);
    }
    // Negative numbers: invert all bits, so that larger magnitudes come first. Positive numbers
    // (and the canonical NaN, whose pattern is above +Infinity's): set the sign bit.
    int ordered = bits < 0 ? ~bits : bits | 0x80000000;
    return ordered & 0xFFFFFFFFL;
  }

  public static long ofDouble(double value) {
    long bits;
    if (value != value) {
      bits = CANONICAL_DOUBLE_NAN;
    } else if (value == 0.0d) {
      bits = 0L;
    } else {
      bits = Double.doubleToRawLongBits(value);
    }
    return bits < 0 ? ~bits : bits | Long.MIN_VALUE;
  }

  /**
   * The high word of a 128-bit two's complement number, made unsigned-comparable; the low word is
   * compared unchanged.
   */
  public static long ofInt128High(long high) {
    return high ^ Long.MIN_VALUE;
  }

  /**
   * The first 8 bytes from {@code bytes[offset..]} (at most {@code length} of them) as a
   * big-endian unsigned number, padded with zero bytes; strings and binaries compare bytewise as
   * unsigned, so this order-preserves prefixes.
   */
  public static long prefixWord(byte[] bytes, int offset, int length) {
    long word = 0;
    int n = Math.min(8, Math.max(0, length));
    for (int i = 0; i < n; i++) {
      word |= (bytes[offset + i] & 0xFFL) << (56 - 8 * i);
    }
    return word;
  }

  /** The Spark-ordered value back from {@link #ofDouble}, for tests and debugging. */
  public static double toDouble(long encoded) {
    long bits = encoded < 0 ? encoded & Long.MAX_VALUE : ~encoded;
    return Double.longBitsToDouble(bits);
  }
}
