package io.gpusort.examples;

import java.io.Serializable;
import java.math.BigInteger;
import java.util.Locale;
import java.util.zip.CRC32;

/**
 * The count and checksum of a set of TeraSort records, independent of their order: the 128-bit
 * sum of the CRC-32 (zlib's, as {@link CRC32} computes it) of every 100-byte record, the
 * definition valsort uses. A lost, duplicated or changed record changes the count or the sum; a
 * reordering changes neither, so this is compared between a sort's input and output while the
 * order is checked separately. Two different sets collide only if their CRC sums happen to be
 * equal (the sum of two records can equal the sum of two others), a small chance for accidental
 * damage, no protection against a deliberate one.
 *
 * @param records how many records were summed
 * @param sumHigh the high 64 bits of the sum
 * @param sumLow the low 64 bits of the sum, unsigned
 */
record TeraChecksum(long records, long sumHigh, long sumLow) implements Serializable {
  static final TeraChecksum EMPTY = new TeraChecksum(0, 0, 0);

  /** The checksum of both sets together. */
  TeraChecksum plus(TeraChecksum other) {
    long low = sumLow + other.sumLow;
    long carry = Long.compareUnsigned(low, sumLow) < 0 ? 1 : 0;
    return new TeraChecksum(records + other.records, sumHigh + other.sumHigh + carry, low);
  }

  /** The 128-bit sum as a non-negative number. */
  BigInteger sum() {
    return new BigInteger(Long.toUnsignedString(sumHigh)).shiftLeft(64)
        .add(new BigInteger(Long.toUnsignedString(sumLow)));
  }

  /** The sum in lowercase hex without leading zeros, as valsort prints it. */
  String sumHex() {
    return sum().toString(16);
  }

  /**
   * Parses a sum printed by {@link #sumHex()} (or by valsort): 1 to 32 hex digits.
   *
   * @throws IllegalArgumentException naming the value otherwise
   */
  static BigInteger parseSum(String hex) {
    String digits = hex.trim().toLowerCase(Locale.ROOT);
    if (digits.startsWith("0x")) {
      digits = digits.substring(2);
    }
    if (digits.isEmpty() || digits.length() > 32 || !digits.chars().allMatch(
        c -> Character.digit(c, 16) >= 0)) {
      throw new IllegalArgumentException("a checksum is 1 to 32 hex digits, not '" + hex + "'");
    }
    return new BigInteger(digits, 16);
  }

  @Override
  public String toString() {
    return String.format(Locale.ROOT, "%,d records, checksum %s", records, sumHex());
  }

  /** Sums records one at a time; not thread-safe. */
  static final class Builder {
    private final CRC32 crc = new CRC32();
    private long records;
    private long sumHigh;
    private long sumLow;

    /** Adds the record at {@code record[offset .. offset + 100)}. */
    void add(byte[] record, int offset) {
      crc.reset();
      crc.update(record, offset, TeraRecords.RECORD_BYTES);
      addCrc(crc.getValue());
    }

    /** Adds the record whose 10 key bytes and 90 value bytes are given apart. */
    void add(byte[] key, byte[] value) {
      crc.reset();
      crc.update(key, 0, TeraRecords.KEY_BYTES);
      crc.update(value, 0, TeraRecords.VALUE_BYTES);
      addCrc(crc.getValue());
    }

    private void addCrc(long crc32) {
      long low = sumLow + crc32;
      if (Long.compareUnsigned(low, sumLow) < 0) {
        sumHigh++;
      }
      sumLow = low;
      records++;
    }

    TeraChecksum build() {
      return new TeraChecksum(records, sumHigh, sumLow);
    }
  }
}
