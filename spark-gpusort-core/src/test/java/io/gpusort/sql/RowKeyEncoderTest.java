package io.gpusort.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.gpusort.TestSeeds;
import io.gpusort.compat.ScalaCollections;
import io.gpusort.keys.KeyLayout;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.apache.spark.sql.catalyst.expressions.Ascending$;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.BoundReference;
import org.apache.spark.sql.catalyst.expressions.Descending$;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.InterpretedOrdering;
import org.apache.spark.sql.catalyst.expressions.InterpretedUnsafeProjection;
import org.apache.spark.sql.catalyst.expressions.Length;
import org.apache.spark.sql.catalyst.expressions.NamedExpression$;
import org.apache.spark.sql.catalyst.expressions.NullsFirst$;
import org.apache.spark.sql.catalyst.expressions.NullsLast$;
import org.apache.spark.sql.catalyst.expressions.SortOrder;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.unsafe.Platform;
import org.apache.spark.unsafe.types.UTF8String;
import org.junit.jupiter.api.Test;

/**
 * Checks {@link RowKeyEncoder} against Spark's own ordering: rows of every supported type, built
 * as real {@link UnsafeRow}s from Spark's internal values, are encoded, and the unsigned word-wise
 * comparison of every pair of encodings must agree with an {@link InterpretedOrdering} over the
 * same sort orders. Where the layout is exact (no truncated string or binary prefix) the signs
 * must be equal; where it needs a tie-break, a strict difference of encodings must be a strict
 * difference in Spark's order, in the same direction, and only equal encodings may hide a
 * difference.
 *
 * <p>Seeded from {@code gpusort.test.seed} when set, randomly otherwise; failures name the seed.
 */
class RowKeyEncoderTest {
  private static final long SEED = TestSeeds.baseSeed();
  private static final int[] PREFIX_BYTES = {1, 3, 8, 9, 16, 24};
  /** Longer than every prefix tried, so that strings sharing it tie in their encodings. */
  private static final String SHARED_PREFIX = "a-shared-prefix-of-thirty-bytes/";

  /** The Spark types under test, with how to make a random internal value of each. */
  private enum Col {
    BOOLEAN(DataTypes.BooleanType), BYTE(DataTypes.ByteType), SHORT(DataTypes.ShortType),
    INT(DataTypes.IntegerType), LONG(DataTypes.LongType), FLOAT(DataTypes.FloatType),
    DOUBLE(DataTypes.DoubleType), DATE(DataTypes.DateType), TIMESTAMP(DataTypes.TimestampType),
    TIMESTAMP_NTZ(DataTypes.TimestampNTZType), DEC_10_2(DataTypes.createDecimalType(10, 2)),
    DEC_18_0(DataTypes.createDecimalType(18, 0)), DEC_38_6(DataTypes.createDecimalType(38, 6)),
    DEC_20_0(DataTypes.createDecimalType(20, 0)), STRING(DataTypes.StringType),
    BINARY(DataTypes.BinaryType), NULL(DataTypes.NullType);

    final DataType type;

    Col(DataType type) {
      this.type = type;
    }
  }

  /** One sort column of a case: its type, direction, null order, nullability, value spread. */
  private record Key(Col col, boolean descending, boolean nullsFirst, boolean nullable,
      boolean fewDistinct, boolean lengthOf) {
    Key(Col col, boolean descending, boolean nullsFirst, boolean nullable, boolean fewDistinct) {
      this(col, descending, nullsFirst, nullable, fewDistinct, false);
    }

    @Override
    public String toString() {
      return (lengthOf ? "length(" + col + ")" : col.toString()) + (descending ? " desc" : " asc")
          + (nullsFirst ? " nulls first" : " nulls last") + (nullable ? "" : " not null")
          + (fewDistinct ? " few-distinct" : "");
    }
  }

  @Test
  void everyTypeAloneInEveryDirection() {
    SplittableRandom random = new SplittableRandom(SEED);
    for (Col col : Col.values()) {
      for (int variant = 0; variant < 8; variant++) {
        boolean nullable = col == Col.NULL || (variant & 4) != 0;
        Key key = new Key(col, (variant & 1) != 0, (variant & 2) != 0, nullable,
            random.nextInt(3) == 0, false);
        int prefixBytes = PREFIX_BYTES[random.nextInt(PREFIX_BYTES.length)];
        checkCase(random.split(), List.of(key), prefixBytes, 100, "single " + variant);
      }
    }
  }

  @Test
  void randomMultiColumnKeys() {
    SplittableRandom random = new SplittableRandom(SEED + 1);
    Col[] cols = Col.values();
    for (int trial = 0; trial < 250; trial++) {
      int numKeys = 1 + random.nextInt(3);
      List<Key> keys = new ArrayList<>();
      for (int i = 0; i < numKeys; i++) {
        Col col = cols[random.nextInt(cols.length)];
        boolean last = i == numKeys - 1;
        // Leading columns with few distinct values make later columns decide the order.
        keys.add(new Key(col, random.nextBoolean(), random.nextBoolean(),
            col == Col.NULL || random.nextBoolean(), !last && random.nextInt(4) != 0, false));
      }
      int prefixBytes = PREFIX_BYTES[random.nextInt(PREFIX_BYTES.length)];
      checkCase(random.split(), keys, prefixBytes, 80, "multi " + trial);
    }
  }

  @Test
  void bytesKeysWithSharedPrefixesAndAFollowingColumn() {
    SplittableRandom random = new SplittableRandom(SEED + 2);
    for (int trial = 0; trial < 40; trial++) {
      Col first = random.nextBoolean() ? Col.STRING : Col.BINARY;
      List<Key> keys = List.of(
          new Key(Col.INT, random.nextBoolean(), random.nextBoolean(), true, true, false),
          new Key(first, random.nextBoolean(), random.nextBoolean(), random.nextBoolean(),
              random.nextBoolean(), false),
          new Key(Col.LONG, random.nextBoolean(), random.nextBoolean(), true, false, false));
      int prefixBytes = PREFIX_BYTES[random.nextInt(PREFIX_BYTES.length)];
      KeySpec spec = checkCase(random.split(), keys, prefixBytes, 100, "bytes " + trial).spec;
      assertEquals(2, spec.layout.numFields(), "the column after the bytes key is dropped");
      assertTrue(spec.layout.needsTieBreak());
    }
  }

  @Test
  void expressionKeysAreProjected() {
    SplittableRandom random = new SplittableRandom(SEED + 3);
    for (int trial = 0; trial < 20; trial++) {
      List<Key> keys = List.of(
          new Key(Col.LONG, random.nextBoolean(), random.nextBoolean(), true, true, false),
          new Key(Col.STRING, random.nextBoolean(), random.nextBoolean(), true, false, true),
          new Key(Col.DOUBLE, random.nextBoolean(), random.nextBoolean(), true, false, false));
      KeySpec spec = checkCase(random.split(), keys, 16, 100, "expression " + trial).spec;
      assertFalse(spec.layout.needsTieBreak());
      assertTrue(spec.keyProjection != null, "a non-column key needs a projection");
    }
  }

  @Test
  void bytesKeysWithinTheirPrefixAreExact() {
    SplittableRandom random = new SplittableRandom(SEED + 4);
    for (int trial = 0; trial < 60; trial++) {
      List<Key> keys = new ArrayList<>();
      if (random.nextBoolean()) {
        keys.add(new Key(Col.INT, random.nextBoolean(), random.nextBoolean(), true, true));
      }
      keys.add(new Key(random.nextBoolean() ? Col.STRING : Col.BINARY, random.nextBoolean(),
          random.nextBoolean(), random.nextBoolean(), random.nextBoolean()));
      int prefixBytes = PREFIX_BYTES[random.nextInt(PREFIX_BYTES.length)];
      // Values cut to the prefix, trailing zero bytes dropped: prefixes of one another, zeros
      // inside, empty and null values, which the encoder must still find exact.
      Checked checked = checkCase(random.split(), keys, prefixBytes, prefixBytes, 100,
          "fitting bytes " + trial);
      assertTrue(checked.spec.layout.needsTieBreak());
      assertTrue(checked.keysExact, "fitting bytes " + trial + ": keys " + keys + ", prefix "
          + prefixBytes + TestSeeds.rerunHint(SEED));
    }
  }

  @Test
  void keysExactUntilAValueCanShareItsPrefix() {
    RowKeyEncoder strings = encoder(DataTypes.StringType, 4, false);
    assertTrue(strings.keysExact(), "no key encoded yet");
    encode(strings, UTF8String.fromString(""), null, UTF8String.fromString("abcd"),
        UTF8String.fromString("a\u0000b"), UTF8String.fromString("\u00e9\u00e9"));
    assertTrue(strings.keysExact(), "values within the prefix, empty and null");
    encode(strings, UTF8String.fromString("abcde"));
    assertFalse(strings.keysExact(), "a value longer than the prefix");
    encode(strings, UTF8String.fromString("a"));
    assertFalse(strings.keysExact(), "stays inexact until reset");
    strings.resetKeysExact();
    assertTrue(strings.keysExact(), "reset");
    encode(strings, UTF8String.fromString("a\u0000"), UTF8String.fromString("b\u0000"),
        UTF8String.fromString("ab"));
    assertTrue(strings.keysExact(), "values of one length, some ending in a zero byte");
    encode(strings, UTF8String.fromString("a"));
    assertFalse(strings.keysExact(), "a value ending in a zero byte ties with the shorter one");
    strings.resetKeysExact();
    encode(strings, UTF8String.fromString("\u00e9\u00e9\u00e9"));
    assertFalse(strings.keysExact(), "4 characters, but 6 UTF-8 bytes");

    RowKeyEncoder binaries = encoder(DataTypes.BinaryType, 4, true);
    encode(binaries, new byte[] {1, 0, 2}, new byte[0], null);
    assertTrue(binaries.keysExact(), "a zero byte inside the value, descending");
    encode(binaries, new byte[] {1, 0});
    assertFalse(binaries.keysExact(), "a binary ending in a zero byte");

    RowKeyEncoder followed = encoder(DataTypes.StringType, 4, false, DataTypes.IntegerType);
    assertFalse(followed.keysExact(), "a sort column after the string is not encoded");
    encode(followed, UTF8String.fromString("a"));
    followed.resetKeysExact();
    assertFalse(followed.keysExact(), "a sort column after the string is not encoded");

    RowKeyEncoder fixed = encoder(DataTypes.LongType, 4, false, DataTypes.IntegerType);
    encode(fixed, 7L);
    assertTrue(fixed.keysExact(), "fixed-width keys are exact");
  }

  /**
   * The sole string key's fast path reads a value's last word whole: bytes after the value in that
   * word (zero where {@code UnsafeWriter} wrote the row, but not promised) are not part of the key.
   */
  @Test
  void bytesAfterAValueInItsLastWordAreNotPartOfItsKey() {
    AttributeReference column = attribute("s", DataTypes.StringType, false);
    RowKeyEncoder strings = new RowKeyEncoder(KeySpec.of(List.of(sortOrder(column, false, true)),
        ScalaCollections.list(List.<Attribute>of(column)), 16));
    UnsafeProjection toUnsafe = toUnsafe(List.of(
        new StructField("s", DataTypes.StringType, false, Metadata.empty())));
    for (String value : List.of("a", "abcdefg", "abcdefgh", "abcdefghi", "abcdefghijklmno")) {
      UnsafeRow row = toUnsafe.apply(new GenericInternalRow(new Object[] {
          UTF8String.fromString(value)})).copy();
      long clean = row.getLong(0);
      int size = (int) clean;
      long end = row.getBaseOffset() + (clean >>> 32) + size;
      long padded = row.getBaseOffset() + row.getSizeInBytes();
      for (long at = end; at < padded; at++) {
        Platform.putByte(row.getBaseObject(), at, (byte) 0xA5);
      }
      long[] fast = new long[strings.layout().numWords()];
      long[] general = new long[fast.length];
      strings.encode(row, fast);
      strings.encodeGeneral(row, general);
      assertEquals(hex(general), hex(fast), "\"" + value + "\" with its word's tail dirty");
    }
  }

  /** An encoder of nullable columns of {@code types}, sorted in that order. */
  private static RowKeyEncoder encoder(DataType first, int prefixBytes, boolean descending,
      DataType... rest) {
    List<Attribute> input = new ArrayList<>();
    List<SortOrder> orders = new ArrayList<>();
    for (int i = 0; i <= rest.length; i++) {
      AttributeReference column = attribute("c" + i, i == 0 ? first : rest[i - 1], true);
      input.add(column);
      orders.add(sortOrder(column, descending, false));
    }
    return new RowKeyEncoder(KeySpec.of(orders, ScalaCollections.list(input),
        prefixBytes));
  }

  /** Encodes one row per value: the value in the first column, null in the second. */
  private static void encode(RowKeyEncoder encoder, Object... values) {
    long[] words = new long[encoder.layout().numWords()];
    for (Object value : values) {
      DataType type = value instanceof UTF8String ? DataTypes.StringType
          : value instanceof byte[] ? DataTypes.BinaryType : DataTypes.LongType;
      UnsafeProjection toUnsafe = toUnsafe(List.of(
          new StructField("c0", type, true, Metadata.empty()),
          new StructField("c1", DataTypes.IntegerType, true, Metadata.empty())));
      encoder.encode(toUnsafe.apply(new GenericInternalRow(new Object[] {value, null})), words);
    }
  }

  @Test
  void unsupportedTypesAreRejected() {
    assertNull(KeySpec.kindOf(DataTypes.createArrayType(DataTypes.IntegerType)));
    AttributeReference array = attribute("a", DataTypes.createArrayType(DataTypes.IntegerType),
        true);
    SortOrder order = sortOrder(array, false, true);
    assertThrows(UnsupportedKeyException.class, () -> KeySpec.of(List.of(order),
        ScalaCollections.list(List.<Attribute>of(array)), 16));
  }

  /** What {@link #checkCase} built, and whether the encoder found the keys exact. */
  private record Checked(KeySpec spec, boolean keysExact) {}

  private static Checked checkCase(SplittableRandom random, List<Key> keys, int prefixBytes,
      int numRows, String name) {
    return checkCase(random, keys, prefixBytes, 0, numRows, name);
  }

  /**
   * Builds rows for {@code keys}, encodes them and compares every pair against Spark: exactly
   * where the layout needs no tie-break or the encoder found the keys exact. With {@code fitBytes}
   * above 0, string and binary values have at most that many bytes and no trailing zero byte.
   */
  private static Checked checkCase(SplittableRandom random, List<Key> keys, int prefixBytes,
      int fitBytes, int numRows, String name) {
    // The input row: one column per key plus a payload column at a random place, so that key
    // ordinals differ from key positions.
    List<AttributeReference> attributes = new ArrayList<>();
    List<StructField> fields = new ArrayList<>();
    int payloadAt = random.nextInt(keys.size() + 1);
    int[] ordinalOfKey = new int[keys.size()];
    for (int i = 0, k = 0; i <= keys.size(); i++) {
      boolean payload = i == payloadAt;
      Key key = payload ? null : keys.get(k);
      DataType type = payload ? DataTypes.IntegerType : key.col.type;
      boolean nullable = payload || key.nullable;
      attributes.add(attribute("c" + i, type, nullable));
      fields.add(new StructField("c" + i, type, nullable, Metadata.empty()));
      if (!payload) {
        ordinalOfKey[k++] = i;
      }
    }
    List<SortOrder> orders = new ArrayList<>();
    for (int k = 0; k < keys.size(); k++) {
      Key key = keys.get(k);
      Expression child = attributes.get(ordinalOfKey[k]);
      if (key.lengthOf) {
        child = new Length(child);
      }
      orders.add(sortOrder(child, key.descending, key.nullsFirst));
    }
    scala.collection.immutable.Seq<Attribute> input =
        ScalaCollections.list(new ArrayList<Attribute>(attributes));
    KeySpec spec = KeySpec.of(orders, input, prefixBytes);
    RowKeyEncoder encoder = new RowKeyEncoder(spec);
    InterpretedOrdering spark = new InterpretedOrdering(
        ScalaCollections.list(orders), input);

    Object[][] values = randomValues(random, keys, ordinalOfKey, fields.size(), numRows,
        fitBytes);
    UnsafeProjection toUnsafe = toUnsafe(fields);
    KeyLayout layout = encoder.layout();
    UnsafeRow[] rows = new UnsafeRow[numRows];
    long[][] encoded = new long[numRows][];
    for (int r = 0; r < numRows; r++) {
      rows[r] = toUnsafe.apply(new GenericInternalRow(values[r])).copy();
      encoded[r] = new long[layout.numWords()];
      // Garbage in the output words must not leak into the key.
      Arrays.fill(encoded[r], -1L);
      encoder.encode(rows[r], encoded[r]);
      checkPaddingIsZero(layout, encoded[r], keys, name, values[r]);
      // The fast paths (one fixed-width or one string field) write what the general loop does.
      long[] general = new long[layout.numWords()];
      encoder.encodeGeneral(rows[r], general);
      if (!Arrays.equals(general, encoded[r])) {
        fail(name + ": keys " + keys + ", prefix " + prefixBytes + " bytes: row "
            + describe(values[r]) + " -> " + hex(encoded[r]) + ", general loop " + hex(general)
            + TestSeeds.rerunHint(SEED));
      }
    }
    boolean keysExact = encoder.keysExact();
    checkEncodedInPlace(encoder, rows, encoded, name);
    boolean exact = !layout.needsTieBreak() || keysExact;
    for (int i = 0; i < numRows; i++) {
      for (int j = i + 1; j < numRows; j++) {
        int byKey = Integer.signum(compareWords(encoded[i], encoded[j]));
        int bySpark = Integer.signum(spark.compare(rows[i], rows[j]));
        boolean ok = exact ? byKey == bySpark : byKey == 0 || byKey == bySpark;
        if (!ok) {
          fail(name + ": keys " + keys + ", prefix " + prefixBytes + " bytes, "
              + (exact ? "exact" : "tie-break") + " layout of " + layout.keyBits() + " bits\n"
              + "  row " + describe(values[i]) + " -> " + hex(encoded[i]) + "\n"
              + "  row " + describe(values[j]) + " -> " + hex(encoded[j]) + "\n"
              + "  Spark compares " + bySpark + ", encodings compare " + byKey + TestSeeds.rerunHint(SEED));
        }
      }
    }
    return new Checked(spec, keysExact);
  }

  /**
   * The run's intake writes each key in place, word w a stride apart (a column-major key batch):
   * the same words as {@link RowKeyEncoder#encode}, none written outside them.
   */
  private static void checkEncodedInPlace(RowKeyEncoder encoder, UnsafeRow[] rows,
      long[][] encoded, String name) {
    int words = encoder.layout().numWords();
    long stride = 24;
    long bytes = stride * words;
    long address = Platform.allocateMemory(bytes);
    try {
      long[] scratch = new long[words];
      for (int r = 0; r < rows.length; r++) {
        Platform.setMemory(address, (byte) 0x5a, bytes);
        encoder.encodeTo(rows[r], address, stride, scratch);
        for (int w = 0; w < words; w++) {
          assertEquals(encoded[r][w], Platform.getLong(null, address + w * stride),
              name + ": word " + w + " of row " + r + " written in place" + TestSeeds.rerunHint(SEED));
          for (long b = 8; b < stride; b++) {
            assertEquals((byte) 0x5a, Platform.getByte(null, address + w * stride + b),
                name + ": a byte between the words of row " + r + " was written");
          }
        }
      }
    } finally {
      Platform.freeMemory(address);
    }
  }

  private static void checkPaddingIsZero(KeyLayout layout, long[] words, List<Key> keys,
      String name, Object[] values) {
    int bits = layout.keyBits();
    for (int w = 0; w < words.length; w++) {
      int used = Math.max(0, Math.min(64, bits - 64 * w));
      long padding = used == 64 ? 0 : words[w] & KeyLayout.mask(64 - used);
      if (padding != 0) {
        fail(name + ": keys " + keys + ": bits after the key's " + bits + " are not zero: "
            + hex(words) + " for row " + describe(values) + TestSeeds.rerunHint(SEED));
      }
    }
  }

  private static Object[][] randomValues(SplittableRandom random, List<Key> keys,
      int[] ordinalOfKey, int numFields, int numRows, int fitBytes) {
    Object[][] values = new Object[numRows][numFields];
    for (int r = 0; r < numRows; r++) {
      for (int f = 0; f < numFields; f++) {
        values[r][f] = random.nextInt(5);
      }
    }
    for (int k = 0; k < keys.size(); k++) {
      Key key = keys.get(k);
      Object[] pool = new Object[1 + random.nextInt(3)];
      for (int i = 0; i < pool.length; i++) {
        pool[i] = randomValue(random, key.col, fitBytes);
      }
      for (int r = 0; r < numRows; r++) {
        boolean isNull = key.nullable && random.nextInt(8) == 0;
        Object v = isNull ? null
            : key.fewDistinct ? pool[random.nextInt(pool.length)]
            : randomValue(random, key.col, fitBytes);
        values[r][ordinalOfKey[k]] = v;
      }
    }
    return values;
  }

  /**
   * A random Spark internal value of {@code col}, often a special one; a string or binary of at
   * most {@code fitBytes} bytes that does not end in a zero byte when {@code fitBytes} is above 0.
   */
  private static Object randomValue(SplittableRandom random, Col col, int fitBytes) {
    boolean special = random.nextInt(4) == 0;
    return switch (col) {
      case BOOLEAN -> random.nextBoolean();
      case BYTE -> (byte) (special ? pick(random, Byte.MIN_VALUE, Byte.MAX_VALUE, 0, -1, 1)
          : random.nextInt(256));
      case SHORT -> (short) (special ? pick(random, Short.MIN_VALUE, Short.MAX_VALUE, 0, -1, 1)
          : random.nextInt(65536));
      case INT, DATE -> special ? (int) pick(random, Integer.MIN_VALUE, Integer.MAX_VALUE, 0, -1, 1)
          : random.nextInt() >> random.nextInt(32);
      case LONG, TIMESTAMP, TIMESTAMP_NTZ -> special
          ? pick(random, Long.MIN_VALUE, Long.MAX_VALUE, 0, -1, 1, Integer.MIN_VALUE, 1L << 32)
          : random.nextLong() >> random.nextInt(64);
      case FLOAT -> special ? Float.intBitsToFloat((int) pick(random, 0x7fc00000, 0x7f800001,
          0xffc00001, 0xffffffff, 0x7f800000, 0xff800000, 0x80000000, 0, 1, 0x80000001,
          0x7f7fffff, 0xff7fffff))
          : random.nextBoolean() ? Float.intBitsToFloat(random.nextInt())
          : (float) (random.nextInt(11) - 5) / 2;
      case DOUBLE -> special ? Double.longBitsToDouble(pick(random, 0x7ff8000000000000L,
          0x7ff0000000000001L, 0xfff8000000000001L, 0xffffffffffffffffL, 0x7ff0000000000000L,
          0xfff0000000000000L, 0x8000000000000000L, 0, 1, 0x8000000000000001L,
          0x7fefffffffffffffL, 0xffefffffffffffffL))
          : random.nextBoolean() ? Double.longBitsToDouble(random.nextLong())
          : (double) (random.nextInt(11) - 5) / 2;
      case DEC_10_2 -> decimal(randomUnscaled(random, 10, special), 10, 2);
      case DEC_18_0 -> decimal(randomUnscaled(random, 18, special), 18, 0);
      case DEC_38_6 -> decimal(randomUnscaled(random, 38, special), 38, 6);
      case DEC_20_0 -> {
        BigInteger unscaled = randomUnscaled(random, 20, special);
        // Mostly negative: the sign extension of the 128-bit value is what is under test.
        yield decimal(random.nextInt(4) == 0 ? unscaled : unscaled.abs().negate(), 20, 0);
      }
      case STRING -> UTF8String.fromString(fitBytes > 0
          ? fittingString(randomString(random), fitBytes) : randomString(random));
      case BINARY -> fitBytes > 0 ? fittingBinary(randomBinary(random), fitBytes)
          : randomBinary(random);
      case NULL -> null;
    };
  }

  private static long pick(SplittableRandom random, long... choices) {
    return choices[random.nextInt(choices.length)];
  }

  /**
   * An unscaled decimal of at most {@code precision} digits: of random length, or one of the
   * values at the edges of the range and of 64-bit words.
   */
  private static BigInteger randomUnscaled(SplittableRandom random, int precision,
      boolean special) {
    BigInteger max = BigInteger.TEN.pow(precision).subtract(BigInteger.ONE);
    if (special) {
      BigInteger two64 = BigInteger.ONE.shiftLeft(64);
      BigInteger two63 = BigInteger.ONE.shiftLeft(63);
      BigInteger[] edges = {BigInteger.ZERO, BigInteger.ONE, BigInteger.ONE.negate(), max,
          max.negate(), two63, two63.negate(), two63.subtract(BigInteger.ONE),
          two63.negate().subtract(BigInteger.ONE), two64, two64.negate(),
          two64.subtract(BigInteger.ONE), two64.negate().add(BigInteger.ONE),
          BigInteger.valueOf(255), BigInteger.valueOf(-256), BigInteger.valueOf(-129)};
      BigInteger v = edges[random.nextInt(edges.length)];
      return v.abs().compareTo(max) <= 0 ? v : BigInteger.ZERO;
    }
    int digits = 1 + random.nextInt(precision);
    StringBuilder sb = new StringBuilder(digits);
    for (int i = 0; i < digits; i++) {
      sb.append((char) ('0' + random.nextInt(10)));
    }
    BigInteger v = new BigInteger(sb.toString());
    return random.nextBoolean() ? v.negate() : v;
  }

  private static Decimal decimal(BigInteger unscaled, int precision, int scale) {
    return Decimal.apply(new BigDecimal(unscaled, scale), precision, scale);
  }

  private static String randomString(SplittableRandom random) {
    String[] alphabet = {"a", "b", "z", "A", "~", "\u007f", "\u0000", "\u00e9", "\u00ff",
        "\u4e2d", "\uffff", "\ud83d\ude00", " "};
    StringBuilder sb = new StringBuilder();
    switch (random.nextInt(6)) {
      case 0 -> { }
      case 1, 2 -> sb.append(SHARED_PREFIX, 0, random.nextInt(SHARED_PREFIX.length() + 1));
      default -> { }
    }
    int length = random.nextInt(4) == 0 ? 0 : random.nextInt(random.nextBoolean() ? 4 : 40);
    for (int i = 0; i < length; i++) {
      sb.append(alphabet[random.nextInt(alphabet.length)]);
    }
    return sb.toString();
  }

  /** {@code s} cut to at most {@code maxBytes} UTF-8 bytes, then cut to no trailing NUL. */
  private static String fittingString(String s, int maxBytes) {
    String cut = s;
    while (cut.getBytes(java.nio.charset.StandardCharsets.UTF_8).length > maxBytes
        || cut.endsWith("\u0000")) {
      cut = cut.substring(0, cut.offsetByCodePoints(cut.length(), -1));
    }
    return cut;
  }

  /** {@code bytes} cut to at most {@code maxBytes}, then cut to no trailing zero byte. */
  private static byte[] fittingBinary(byte[] bytes, int maxBytes) {
    int length = Math.min(bytes.length, maxBytes);
    while (length > 0 && bytes[length - 1] == 0) {
      length--;
    }
    return Arrays.copyOf(bytes, length);
  }

  private static byte[] randomBinary(SplittableRandom random) {
    byte[] alphabet = {0, 1, 0x41, 0x7f, (byte) 0x80, (byte) 0x81, (byte) 0xc0, (byte) 0xfe,
        (byte) 0xff};
    int shared = random.nextInt(3) == 0 ? random.nextInt(30) : 0;
    int length = shared + random.nextInt(random.nextBoolean() ? 3 : 30);
    byte[] bytes = new byte[length];
    for (int i = 0; i < length; i++) {
      bytes[i] = i < shared ? (byte) (0x90 + i)
          : random.nextBoolean() ? alphabet[random.nextInt(alphabet.length)]
          : (byte) random.nextInt(256);
    }
    return bytes;
  }

  /**
   * Spark's interpreted projection to {@link UnsafeRow}: it writes the same bytes as the generated
   * one, without compiling code for each of the hundreds of schemas here.
   */
  private static UnsafeProjection toUnsafe(List<StructField> fields) {
    List<Expression> columns = new ArrayList<>();
    for (int i = 0; i < fields.size(); i++) {
      columns.add(new BoundReference(i, fields.get(i).dataType(), fields.get(i).nullable()));
    }
    return InterpretedUnsafeProjection.createProjection(
        ScalaCollections.list(columns));
  }

  static AttributeReference attribute(String name, DataType type, boolean nullable) {
    return new AttributeReference(name, type, nullable, Metadata.empty(),
        NamedExpression$.MODULE$.newExprId(),
        ScalaCollections.list(List.<String>of()));
  }

  static SortOrder sortOrder(Expression child, boolean descending, boolean nullsFirst) {
    return new SortOrder(child,
        descending ? Descending$.MODULE$ : Ascending$.MODULE$,
        nullsFirst ? NullsFirst$.MODULE$ : NullsLast$.MODULE$,
        ScalaCollections.list(List.<Expression>of()));
  }

  /** The reference: words compared one by one as unsigned numbers, most significant first. */
  private static int compareWords(long[] a, long[] b) {
    for (int w = 0; w < a.length; w++) {
      int c = Long.compareUnsigned(a[w], b[w]);
      if (c != 0) {
        return c;
      }
    }
    return 0;
  }

  private static String hex(long[] words) {
    StringBuilder sb = new StringBuilder("[");
    for (int w = 0; w < words.length; w++) {
      sb.append(w == 0 ? "" : " ").append(String.format("%016x", words[w]));
    }
    return sb.append(']').toString();
  }

  private static String describe(Object[] values) {
    StringBuilder sb = new StringBuilder("(");
    for (int i = 0; i < values.length; i++) {
      Object v = values[i];
      sb.append(i == 0 ? "" : ", ");
      if (v instanceof byte[] bytes) {
        sb.append("0x").append(java.util.HexFormat.of().formatHex(bytes));
      } else if (v instanceof UTF8String s) {
        sb.append('"').append(s.toString().replace("\u0000", "\\0")).append('"');
      } else if (v instanceof Double d) {
        sb.append(d).append(" (0x").append(Long.toHexString(Double.doubleToRawLongBits(d)))
            .append(')');
      } else if (v instanceof Float f) {
        sb.append(f).append(" (0x").append(Integer.toHexString(Float.floatToRawIntBits(f)))
            .append(')');
      } else {
        sb.append(v);
      }
    }
    return sb.append(')').toString();
  }
}
