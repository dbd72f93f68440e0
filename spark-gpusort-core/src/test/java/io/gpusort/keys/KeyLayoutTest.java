package io.gpusort.keys;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpusort.TestSeeds;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Checks {@link KeyLayout}: bit packing against a {@link BigInteger} model of the key as one big
 * number, and field offsets, widths and truncation for mixes of fields.
 *
 * <p>Seeded from {@code gpusort.test.seed} when set, randomly otherwise; failures name the seed.
 */
class KeyLayoutTest {
  private static final long SEED = TestSeeds.baseSeed();
  private static final int WORDS = 3;
  private static final int BITS = 64 * WORDS;
  private static final KeyKind[] FIXED_KINDS = {
      KeyKind.NULL, KeyKind.BOOLEAN, KeyKind.BYTE, KeyKind.SHORT, KeyKind.INT, KeyKind.LONG,
      KeyKind.FLOAT, KeyKind.DOUBLE, KeyKind.INT128};

  @Test
  void putBitsAtEveryOffsetAndWidth() {
    SplittableRandom random = new SplittableRandom(SEED);
    for (int pos = 0; pos < BITS; pos++) {
      for (int width = 0; width <= 64 && pos + width <= BITS; width++) {
        for (int trial = 0; trial < 4; trial++) {
          long value = valueOfWidth(random, width, trial);
          // Bits outside the target range are set at random and must be left as they are.
          BigInteger outside = randomBits(random).andNot(rangeMask(pos, width));
          long[] words = toWords(outside);
          KeyLayout.putBits(words, pos, width, value);
          BigInteger expected = outside.or(
              new BigInteger(Long.toUnsignedString(value)).shiftLeft(BITS - pos - width));
          assertArrayEquals(toWords(expected), words, "putBits(pos " + pos + ", width " + width
              + ", value 0x" + Long.toHexString(value) + ")" + TestSeeds.rerunHint(SEED));
        }
      }
    }
  }

  @Test
  void maskHasTheLowBitsSet() {
    for (int width = 0; width <= 64; width++) {
      BigInteger expected = BigInteger.ONE.shiftLeft(width).subtract(BigInteger.ONE);
      assertEquals(expected.longValue(), KeyLayout.mask(width), "mask(" + width + ")");
    }
  }

  @Test
  void emptyLayoutStillHasOneWord() {
    KeyLayout layout = new KeyLayout(List.of());
    assertEquals(0, layout.numFields());
    assertEquals(0, layout.keyBits());
    assertEquals(1, layout.numWords());
    assertFalse(layout.needsTieBreak());
  }

  @Test
  void offsetsOfAMixOfNullableAndNonNullableFields() {
    KeyLayout layout = new KeyLayout(List.of(
        KeyField.fixed(KeyKind.INT, false, true, true),
        KeyField.fixed(KeyKind.LONG, true, false, false),
        KeyField.fixed(KeyKind.BOOLEAN, false, false, true),
        KeyField.fixed(KeyKind.NULL, false, true, true),
        KeyField.fixed(KeyKind.INT128, false, true, false)));
    assertEquals(5, layout.numFields());
    assertEquals(0, layout.bitOffset(0));
    assertEquals(33, layout.bitOffset(1));
    assertEquals(97, layout.bitOffset(2));
    assertEquals(99, layout.bitOffset(3));
    assertEquals(100, layout.bitOffset(4));
    assertEquals(228, layout.keyBits());
    assertEquals(4, layout.numWords());
    assertFalse(layout.needsTieBreak());
  }

  @Test
  void exactWordBoundaries() {
    assertEquals(1, new KeyLayout(List.of(KeyField.fixed(KeyKind.LONG, false, true, false)))
        .numWords());
    KeyLayout nullableLong = new KeyLayout(
        List.of(KeyField.fixed(KeyKind.LONG, false, true, true)));
    assertEquals(65, nullableLong.keyBits());
    assertEquals(2, nullableLong.numWords());
    KeyLayout twoInts = new KeyLayout(List.of(KeyField.fixed(KeyKind.INT, false, true, false),
        KeyField.fixed(KeyKind.FLOAT, true, true, false)));
    assertEquals(64, twoInts.keyBits());
    assertEquals(1, twoInts.numWords());
  }

  @Test
  void randomLayoutsPackFieldsBackToBack() {
    SplittableRandom random = new SplittableRandom(SEED + 1);
    for (int trial = 0; trial < 2000; trial++) {
      List<KeyField> fields = new ArrayList<>();
      int numFields = random.nextInt(7);
      for (int i = 0; i < numFields; i++) {
        boolean bytes = random.nextInt(6) == 0;
        KeyKind kind = bytes ? KeyKind.BYTES : FIXED_KINDS[random.nextInt(FIXED_KINDS.length)];
        fields.add(new KeyField(kind, random.nextBoolean(), random.nextBoolean(),
            random.nextBoolean(), bytes ? 1 + random.nextInt(40) : 0));
      }
      KeyLayout layout = new KeyLayout(fields);
      int firstBytes = -1;
      for (int i = 0; i < fields.size() && firstBytes < 0; i++) {
        if (fields.get(i).kind() == KeyKind.BYTES) {
          firstBytes = i;
        }
      }
      int kept = firstBytes < 0 ? fields.size() : firstBytes + 1;
      String context = fields + TestSeeds.rerunHint(SEED);
      assertEquals(kept, layout.numFields(), "fields kept of " + context);
      assertEquals(firstBytes >= 0, layout.needsTieBreak(), "needsTieBreak of " + context);
      int bits = 0;
      for (int i = 0; i < kept; i++) {
        assertSame(fields.get(i), layout.field(i));
        assertEquals(bits, layout.bitOffset(i), "offset of field " + i + " of " + context);
        KeyField f = fields.get(i);
        int valueBits = f.kind().isFixedWidth() ? f.kind().fixedBits() : 8 * f.prefixBytes();
        assertEquals(valueBits + (f.nullable() ? 1 : 0), f.totalBits());
        bits += f.totalBits();
      }
      assertEquals(bits, layout.keyBits(), "keyBits of " + context);
      assertEquals(Math.max(1, (bits + 63) / 64), layout.numWords(), "numWords of " + context);
    }
  }

  @Test
  void fieldsAfterTheFirstBytesFieldAreDropped() {
    KeyField str = new KeyField(KeyKind.BYTES, false, true, true, 16);
    KeyLayout layout = new KeyLayout(List.of(
        KeyField.fixed(KeyKind.INT, false, true, false), str,
        KeyField.fixed(KeyKind.LONG, false, true, false),
        new KeyField(KeyKind.BYTES, true, false, true, 8)));
    assertEquals(2, layout.numFields());
    assertSame(str, layout.field(1));
    assertEquals(32, layout.bitOffset(1));
    assertEquals(32 + 1 + 128, layout.keyBits());
    assertEquals(3, layout.numWords());
    assertTrue(layout.needsTieBreak());

    KeyLayout leading = new KeyLayout(List.of(new KeyField(KeyKind.BYTES, false, true, false, 3),
        KeyField.fixed(KeyKind.DOUBLE, false, true, true)));
    assertEquals(1, leading.numFields());
    assertEquals(24, leading.keyBits());
    assertEquals(1, leading.numWords());
    assertTrue(leading.needsTieBreak());
  }

  @Test
  void bytesFieldNeedsAPrefix() {
    assertThrows(IllegalArgumentException.class,
        () -> new KeyField(KeyKind.BYTES, false, true, true, 0));
    assertTrue(new KeyField(KeyKind.BYTES, false, true, true, 1).isTruncated());
    assertFalse(KeyField.fixed(KeyKind.INT128, false, true, true).isTruncated());
  }

  /** A value of exactly {@code width} bits: all ones, a single top bit, or random. */
  private static long valueOfWidth(SplittableRandom random, int width, int trial) {
    long mask = KeyLayout.mask(width);
    return switch (trial) {
      case 0 -> mask;
      case 1 -> width == 0 ? 0 : 1L << (width - 1);
      default -> random.nextLong() & mask;
    };
  }

  private static BigInteger rangeMask(int pos, int width) {
    return BigInteger.ONE.shiftLeft(width).subtract(BigInteger.ONE)
        .shiftLeft(BITS - pos - width);
  }

  private static BigInteger randomBits(SplittableRandom random) {
    BigInteger bits = BigInteger.ZERO;
    for (int w = 0; w < WORDS; w++) {
      bits = bits.shiftLeft(64).or(new BigInteger(Long.toUnsignedString(random.nextLong())));
    }
    return bits;
  }

  /** Word 0 holds the most significant 64 bits. */
  private static long[] toWords(BigInteger bits) {
    long[] words = new long[WORDS];
    for (int w = 0; w < WORDS; w++) {
      words[w] = bits.shiftRight(64 * (WORDS - 1 - w)).longValue();
    }
    return words;
  }
}
