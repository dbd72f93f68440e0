package io.gpusort.sql;

import io.gpusort.keys.KeyField;
import io.gpusort.keys.KeyKind;
import io.gpusort.keys.KeyLayout;
import io.gpusort.keys.OrderedBits;
import io.gpusort.memory.HostMemory;
import java.nio.ByteOrder;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.unsafe.Platform;

/**
 * Encodes the sort key of an {@link UnsafeRow} into the words of a {@link KeyLayout}. One instance
 * per task: it reuses its projection and scratch state.
 */
final class RowKeyEncoder {
  private static final boolean LITTLE_ENDIAN = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN;

  private final KeyLayout layout;
  private final int numFields;
  private final KeyKind[] kinds;
  private final int[] ordinals;
  private final int[] offsets;
  private final boolean[] descending;
  private final boolean[] nullsFirst;
  private final boolean[] nullable;
  private final int[] valueBits;
  private final UnsafeProjection projection;
  /**
   * The width of the only key field when it is a fixed-width value read from the row (a long,
   * int, double, ... column): its key is encoded without the general loop, one word, or two for
   * a nullable field of 64 bits (its null flag first). 0 otherwise.
   */
  private final int soleFixedWidth;
  /** Whether the sole fixed-width field is nullable: its key starts with a null flag. */
  private final boolean soleNullable;
  /**
   * Whether the key is one string or binary field read from the row, its prefix whole words
   * ({@link #soleBytesKey}).
   */
  private final boolean soleBytes;
  /** Whether the layout encodes every sort column: none follows its bytes field, if it has one. */
  private final boolean allColumnsEncoded;
  /**
   * Whether, since the last {@link #resetKeysExact}, every bytes value fitted the prefix and no key
   * was marked inexact (and every sort column is encoded).
   */
  private boolean keysExact;
  /** Whether a bytes value encoded since the last reset ended in a zero byte. */
  private boolean anyEndsInZero;
  /**
   * The length of every bytes value encoded since the last reset: {@link #NO_SIZE} before the
   * first, {@link #MIXED_SIZES} once two differ.
   */
  private int commonSize = NO_SIZE;
  private static final int NO_SIZE = -1;
  private static final int MIXED_SIZES = -2;

  RowKeyEncoder(KeySpec spec) {
    this.layout = spec.layout;
    this.numFields = layout.numFields();
    this.kinds = new KeyKind[numFields];
    this.offsets = new int[numFields];
    this.descending = new boolean[numFields];
    this.nullsFirst = new boolean[numFields];
    this.nullable = new boolean[numFields];
    this.valueBits = new int[numFields];
    for (int i = 0; i < numFields; i++) {
      KeyField f = layout.field(i);
      kinds[i] = f.kind();
      offsets[i] = layout.bitOffset(i);
      descending[i] = f.descending();
      nullsFirst[i] = f.nullsFirst();
      nullable[i] = f.nullable();
      valueBits[i] = f.valueBits();
    }
    this.ordinals = spec.ordinals.clone();
    this.projection = spec.keyProjection == null ? null : UnsafeProjection.create(spec.keyProjection);
    int width = numFields == 1 ? fixedWidth(kinds[0]) : 0;
    int flagBits = numFields == 1 && nullable[0] ? 1 : 0;
    this.soleFixedWidth = width > 0 && offsets[0] == 0 && projection == null
        && layout.numWords() == (width + flagBits + 63) / 64 ? width : 0;
    this.soleNullable = soleFixedWidth != 0 && nullable[0];
    this.soleBytes = numFields == 1 && kinds[0] == KeyKind.BYTES && offsets[0] == 0
        && projection == null && (valueBits[0] & 63) == 0
        && layout.numWords() == valueBits[0] / 64 + (nullable[0] ? 1 : 0);
    this.allColumnsEncoded = numFields == spec.boundOrders.size();
    this.keysExact = allColumnsEncoded;
  }

  private static int fixedWidth(KeyKind kind) {
    return switch (kind) {
      case BYTE -> 8;
      case SHORT -> 16;
      case INT, FLOAT -> 32;
      case LONG, DOUBLE -> 64;
      default -> 0;
    };
  }

  KeyLayout layout() {
    return layout;
  }

  /**
   * Whether the keys encoded since the last {@link #resetKeysExact} (or since this encoder was
   * made) are exact: two of them equal word for word belong to rows that Spark's ordering compares
   * as equal, so that ordering them by their words alone needs no tie-break.
   *
   * <p>Only a bytes field can hide a difference, and it is the last encoded field ({@link
   * KeyLayout}). Its keys are exact when no sort column follows it and no value encoded was longer
   * than the prefix or ended in a zero byte. The prefix is padded with zeros, so when values a and
   * b of at most prefix bytes, a no longer than b, have equal prefixes, b is a followed by zero
   * bytes; b ends in none, so b is a, and Spark compares the two equal (by their bytes). A null's
   * null flag differs from every value's, an empty value's included, so the two never tie; a
   * descending field's bits are complemented, which keeps equal bits equal; the fixed-width fields
   * before it are equal in Spark's order when their bits are.
   */
  boolean keysExact() {
    return keysExact && (!anyEndsInZero || commonSize != MIXED_SIZES);
  }

  /** Records that a key taken in already encoded (from a shuffled chunk) was truncated. */
  void markKeysInexact() {
    keysExact = false;
  }

  /** Starts a new span of keys for {@link #keysExact}: a new run. */
  void resetKeysExact() {
    keysExact = allColumnsEncoded;
    anyEndsInZero = false;
    commonSize = NO_SIZE;
  }

  /**
   * What {@link #tiesAreEqual} needs to know of the keys encoded since the last reset, taken
   * before the next reset (a run's, when it is sealed); null where they are not exact.
   */
  KeySpan span() {
    return keysExact() ? new KeySpan(anyEndsInZero, commonSize) : null;
  }

  /** A span of exact keys: whether a bytes value ended in a zero byte, their common length. */
  record KeySpan(boolean anyEndsInZero, int commonSize) {}

  /**
   * Whether {@code other}, whose key words equal those of a key in {@code span} (exact keys),
   * equals that key in Spark's order: its bytes value, if any, fits the prefix and, like the
   * span's, ends in no zero byte or has the span's common length (see {@link #keysExact}).
   */
  boolean tiesAreEqual(KeySpan span, UnsafeRow other) {
    int field = numFields - 1;
    if (numFields > 0 && projection != null) {
      other = projection.apply(other);
    }
    if (numFields == 0 || kinds[field] != KeyKind.BYTES || other.isNullAt(ordinals[field])) {
      // Only a bytes field hides a difference; a null's flag matches only another null.
      return true;
    }
    long offsetAndSize = other.getLong(ordinals[field]);
    int size = (int) offsetAndSize;
    if (size > valueBits[field] >>> 3) {
      return false;
    }
    if (size == span.commonSize()) {
      return true;
    }
    long address = other.getBaseOffset() + (offsetAndSize >>> 32);
    return !span.anyEndsInZero()
        && (size == 0 || Platform.getByte(other.getBaseObject(), address + size - 1) != 0);
  }

  /** Notes a bytes value of {@code size} bytes at {@code address} for {@link #keysExact}. */
  private void noteBytesValue(Object base, long address, int size, int prefixBytes) {
    if (size > prefixBytes) {
      keysExact = false;
      return;
    }
    if (size > 0 && Platform.getByte(base, address + size - 1) == 0) {
      anyEndsInZero = true;
    }
    if (size != commonSize) {
      commonSize = commonSize == NO_SIZE ? size : MIXED_SIZES;
    }
  }

  /** Writes the key of {@code row} into {@code words} (length {@code layout.numWords()}). */
  void encode(UnsafeRow row, long[] words) {
    encodeAt(row, words, Platform.LONG_ARRAY_OFFSET, 8, words);
  }

  /**
   * Writes the key of {@code row} into native memory, word {@code w} at {@code address + w *
   * strideBytes} (a row of a column-major key batch); the general loop goes through {@code
   * scratch} (length {@code layout.numWords()}), the fast paths write in place.
   */
  void encodeTo(UnsafeRow row, long address, long strideBytes, long[] scratch) {
    encodeAt(row, null, address, strideBytes, scratch);
  }

  /**
   * The key of {@code row}, word {@code w} at {@code offset + w * stride} of {@code target} (an
   * array, or null for an address); the general loop writes {@code scratch}, copied from there
   * unless it is the target itself.
   */
  private void encodeAt(UnsafeRow row, Object target, long offset, long stride, long[] scratch) {
    if (soleFixedWidth != 0 && !soleNullable) {
      Platform.putLong(target, offset, soleFixedKey(row));
    } else if (soleFixedWidth != 0) {
      boolean isNull = row.isNullAt(ordinals[0]);
      putNullable(target, offset, stride, isNull ? 0L : soleFixedKey(row), isNull);
    } else if (soleBytes) {
      soleBytesKey(row, target, offset, stride);
    } else {
      encodeGeneral(row, scratch);
      if (target != scratch) {
        for (int w = 0; w < scratch.length; w++) {
          Platform.putLong(target, offset + w * stride, scratch[w]);
        }
      }
    }
  }

  /**
   * The key of a row whose key is one string or binary field, its prefix whole words: each 8
   * bytes of the prefix is one word, shifted one bit down behind the null flag where the field is
   * nullable. The words {@link #encodeGeneral} writes, without its loop, switch and bit packing,
   * written at {@code offset + w * stride} of {@code target} (an array, or null for an address).
   *
   * <p>A value's bytes lie in whole words of the row, so a word holding its last bytes is read
   * whole and the bytes after the value masked off.
   */
  private void soleBytesKey(UnsafeRow row, Object target, long offset, long stride) {
    int ordinal = ordinals[0];
    int chunks = valueBits[0] >>> 6;
    boolean shifted = nullable[0];
    long carry = 0;
    if (shifted) {
      boolean isNull = row.isNullAt(ordinal);
      carry = isNull ^ nullsFirst[0] ? 1L << 63 : 0L;
      if (isNull) {
        Platform.putLong(target, offset, carry);
        for (int c = 1; c <= chunks; c++) {
          Platform.putLong(target, offset + c * stride, 0L);
        }
        return;
      }
    }
    long offsetAndSize = row.getLong(ordinal);
    int size = (int) offsetAndSize;
    long address = row.getBaseOffset() + (offsetAndSize >>> 32);
    Object base = row.getBaseObject();
    boolean desc = descending[0];
    for (int c = 0; c < chunks; c++) {
      int available = size - 8 * c;
      long chunk = available <= 0 ? 0L : readWordOfValue(base, address + 8L * c, available);
      if (desc) {
        chunk = ~chunk;
      }
      if (shifted) {
        Platform.putLong(target, offset + c * stride, carry | (chunk >>> 1));
        carry = chunk << 63;
      } else {
        Platform.putLong(target, offset + c * stride, chunk);
      }
    }
    if (shifted) {
      Platform.putLong(target, offset + chunks * stride, carry);
    }
    noteBytesValue(base, address, size, 8 * chunks);
  }

  /** {@link #encode} by the general loop over the fields, whatever the key (for tests too). */
  void encodeGeneral(UnsafeRow row, long[] words) {
    java.util.Arrays.fill(words, 0L);
    UnsafeRow source = projection == null ? row : projection.apply(row);
    for (int i = 0; i < numFields; i++) {
      int ordinal = ordinals[i];
      int pos = offsets[i];
      if (nullable[i]) {
        boolean isNull = source.isNullAt(ordinal);
        KeyLayout.putBits(words, pos, 1, isNull ^ nullsFirst[i] ? 1 : 0);
        pos++;
        if (isNull) {
          continue;
        }
      }
      encodeValue(source, i, ordinal, pos, words);
    }
  }

  /**
   * The input column whose values alone make the key, where keys can be encoded straight from its
   * column vector ({@link #encodeColumn}): a single fixed-width field, no projection; -1
   * otherwise.
   */
  int columnOrdinal() {
    return soleFixedWidth != 0 ? ordinals[0] : -1;
  }

  /**
   * Writes the keys of values {@code [from, from + count)} of {@code column}, the input column
   * {@link #columnOrdinal}, from {@code address} on, a word a row, a key's second word (a
   * nullable 64-bit field's) {@code strideBytes} after its first: the columnar intake's key
   * encoding, one loop per kind, the same words {@link #encode} writes for the rows made of them.
   */
  void encodeColumn(ColumnVector column, int from, int count, long address, long strideBytes) {
    if (column.hasNull()) {
      encodeColumnValuesWithNulls(column, from, count, address);
    } else {
      encodeColumnValues(column, from, count, address);
    }
    if (!soleNullable) {
      return;
    }
    // The values' words, moved behind the null flag; then the nulls, whatever their slots held.
    for (int j = 0; j < count; j++) {
      long at = address + 8L * j;
      putNullable(null, at, strideBytes, HostMemory.getLong(at), false);
    }
    if (column.hasNull()) {
      for (int j = 0; j < count; j++) {
        if (column.isNullAt(from + j)) {
          putNullable(null, address + 8L * j, strideBytes, 0L, true);
        }
      }
    }
  }

  /**
   * The key of a nullable sole fixed-width field at {@code offset} of {@code target}: its null
   * flag, then {@code word} (its value's word as {@link #soleFixedKey} makes it) one bit down, the
   * bit shifted out in a second word where the field has 64 bits.
   */
  private void putNullable(Object target, long offset, long stride, long word, boolean isNull) {
    long flag = isNull ^ nullsFirst[0] ? 1L << 63 : 0L;
    Platform.putLong(target, offset, flag | (word >>> 1));
    if (soleFixedWidth == 64) {
      Platform.putLong(target, offset + stride, word << 63);
    }
  }

  /**
   * Each value's key word as {@link #soleFixedKey} makes it, a word a row from {@code address}:
   * for a column without nulls.
   */
  private void encodeColumnValues(ColumnVector column, int from, int count, long address) {
    switch (kinds[0]) {
      case LONG -> {
        for (int j = 0; j < count; j++) {
          HostMemory.putLong(address + 8L * j, finish(OrderedBits.ofLong(column.getLong(from + j))));
        }
      }
      case DOUBLE -> {
        for (int j = 0; j < count; j++) {
          HostMemory.putLong(address + 8L * j,
              finish(OrderedBits.ofDouble(column.getDouble(from + j))));
        }
      }
      case INT -> {
        for (int j = 0; j < count; j++) {
          HostMemory.putLong(address + 8L * j, finish(OrderedBits.ofInt(column.getInt(from + j))));
        }
      }
      case FLOAT -> {
        for (int j = 0; j < count; j++) {
          HostMemory.putLong(address + 8L * j,
              finish(OrderedBits.ofFloat(column.getFloat(from + j))));
        }
      }
      case SHORT -> {
        for (int j = 0; j < count; j++) {
          HostMemory.putLong(address + 8L * j,
              finish(OrderedBits.ofShort(column.getShort(from + j))));
        }
      }
      case BYTE -> {
        for (int j = 0; j < count; j++) {
          HostMemory.putLong(address + 8L * j, finish(OrderedBits.ofByte(column.getByte(from + j))));
        }
      }
      default -> throw new IllegalStateException("no column encoding for " + kinds[0]);
    }
  }

  /**
   * As {@link #encodeColumnValues}, a null row's word 0: its value is never read, since a vector
   * may hold anything there (a Parquet reader leaves a null row's dictionary id unwritten, and
   * decoding a stale or uninitialised one reads past the dictionary's end).
   */
  private void encodeColumnValuesWithNulls(ColumnVector column, int from, int count,
      long address) {
    switch (kinds[0]) {
      case LONG -> {
        for (int j = 0; j < count; j++) {
          int r = from + j;
          HostMemory.putLong(address + 8L * j,
              column.isNullAt(r) ? 0L : finish(OrderedBits.ofLong(column.getLong(r))));
        }
      }
      case DOUBLE -> {
        for (int j = 0; j < count; j++) {
          int r = from + j;
          HostMemory.putLong(address + 8L * j,
              column.isNullAt(r) ? 0L : finish(OrderedBits.ofDouble(column.getDouble(r))));
        }
      }
      case INT -> {
        for (int j = 0; j < count; j++) {
          int r = from + j;
          HostMemory.putLong(address + 8L * j,
              column.isNullAt(r) ? 0L : finish(OrderedBits.ofInt(column.getInt(r))));
        }
      }
      case FLOAT -> {
        for (int j = 0; j < count; j++) {
          int r = from + j;
          HostMemory.putLong(address + 8L * j,
              column.isNullAt(r) ? 0L : finish(OrderedBits.ofFloat(column.getFloat(r))));
        }
      }
      case SHORT -> {
        for (int j = 0; j < count; j++) {
          int r = from + j;
          HostMemory.putLong(address + 8L * j,
              column.isNullAt(r) ? 0L : finish(OrderedBits.ofShort(column.getShort(r))));
        }
      }
      case BYTE -> {
        for (int j = 0; j < count; j++) {
          int r = from + j;
          HostMemory.putLong(address + 8L * j,
              column.isNullAt(r) ? 0L : finish(OrderedBits.ofByte(column.getByte(r))));
        }
      }
      default -> throw new IllegalStateException("no column encoding for " + kinds[0]);
    }
  }

  /** A sole fixed-width field's ordered bits as its key word: complemented if descending, on top. */
  private long finish(long bits) {
    int width = soleFixedWidth;
    long ordered = descending[0] ? ~bits : bits;
    return width == 64 ? ordered : (ordered & KeyLayout.mask(width)) << (64 - width);
  }

  /**
   * The key word of a row whose key is a single fixed-width field (not null): its ordered bits on
   * top, complemented if descending.
   */
  private long soleFixedKey(UnsafeRow row) {
    int ordinal = ordinals[0];
    long bits = switch (kinds[0]) {
      case BYTE -> OrderedBits.ofByte(row.getByte(ordinal));
      case SHORT -> OrderedBits.ofShort(row.getShort(ordinal));
      case INT -> OrderedBits.ofInt(row.getInt(ordinal));
      case FLOAT -> OrderedBits.ofFloat(row.getFloat(ordinal));
      case LONG -> OrderedBits.ofLong(row.getLong(ordinal));
      default -> OrderedBits.ofDouble(row.getDouble(ordinal));
    };
    return finish(bits);
  }

  private void encodeValue(UnsafeRow row, int field, int ordinal, int pos, long[] words) {
    boolean desc = descending[field];
    switch (kinds[field]) {
      case NULL -> { }
      case BOOLEAN -> putFixed(words, pos, 1, OrderedBits.ofBoolean(row.getBoolean(ordinal)), desc);
      case BYTE -> putFixed(words, pos, 8, OrderedBits.ofByte(row.getByte(ordinal)), desc);
      case SHORT -> putFixed(words, pos, 16, OrderedBits.ofShort(row.getShort(ordinal)), desc);
      case INT -> putFixed(words, pos, 32, OrderedBits.ofInt(row.getInt(ordinal)), desc);
      case LONG -> putFixed(words, pos, 64, OrderedBits.ofLong(row.getLong(ordinal)), desc);
      case FLOAT -> putFixed(words, pos, 32, OrderedBits.ofFloat(row.getFloat(ordinal)), desc);
      case DOUBLE -> putFixed(words, pos, 64, OrderedBits.ofDouble(row.getDouble(ordinal)), desc);
      case INT128 -> putInt128(row, ordinal, pos, words, desc);
      case BYTES -> putBytesPrefix(row, ordinal, pos, valueBits[field] >>> 3, words, desc);
      default -> throw new IllegalStateException("unknown key kind " + kinds[field]);
    }
  }

  private static void putFixed(long[] words, int pos, int width, long value, boolean desc) {
    KeyLayout.putBits(words, pos, width, desc ? ~value & KeyLayout.mask(width) : value);
  }

  /** A decimal of more than 18 digits: UnsafeRow holds its unscaled value's two's complement bytes. */
  private static void putInt128(UnsafeRow row, int ordinal, int pos, long[] words, boolean desc) {
    long offsetAndSize = row.getLong(ordinal);
    int size = (int) offsetAndSize;
    long address = row.getBaseOffset() + (offsetAndSize >>> 32);
    Object base = row.getBaseObject();
    long high = 0;
    long low = 0;
    if (size > 0 && Platform.getByte(base, address) < 0) {
      high = -1L;
      low = -1L;
    }
    for (int i = 0; i < size; i++) {
      high = (high << 8) | (low >>> 56);
      low = (low << 8) | (Platform.getByte(base, address + i) & 0xFFL);
    }
    long orderedHigh = OrderedBits.ofInt128High(high);
    putFixed(words, pos, 64, orderedHigh, desc);
    putFixed(words, pos + 64, 64, low, desc);
  }

  /**
   * Writes the first {@code prefixBytes} bytes of a string or binary value, zero-padded, and notes
   * the value for {@link #keysExact}.
   */
  private void putBytesPrefix(UnsafeRow row, int ordinal, int pos, int prefixBytes,
      long[] words, boolean desc) {
    long offsetAndSize = row.getLong(ordinal);
    int size = (int) offsetAndSize;
    long address = row.getBaseOffset() + (offsetAndSize >>> 32);
    Object base = row.getBaseObject();
    for (int start = 0; start < prefixBytes; start += 8) {
      int chunkBytes = Math.min(8, prefixBytes - start);
      int available = size - start;
      long chunk = available <= 0 ? 0L : readWordOfValue(base, address + start, available);
      int width = 8 * chunkBytes;
      putFixed(words, pos + 8 * start, width, chunk >>> (64 - width), desc);
    }
    noteBytesValue(base, address, size, prefixBytes);
  }

  /**
   * The word at {@code address} of a value with {@code available} (at least 1) of its bytes from
   * there, big-endian, the bytes past the value zero. The value lies in whole words of its row
   * ({@link UnsafeRow} pads each variable-length value to a word), so the whole word is readable.
   */
  private static long readWordOfValue(Object base, long address, int available) {
    long raw = Platform.getLong(base, address);
    long word = LITTLE_ENDIAN ? Long.reverseBytes(raw) : raw;
    return available >= 8 ? word : word & (-1L << (64 - 8 * available));
  }
}
