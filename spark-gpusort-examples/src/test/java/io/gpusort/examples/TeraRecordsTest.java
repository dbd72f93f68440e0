package io.gpusort.examples;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;
import java.util.zip.CRC32;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class TeraRecordsTest {
  private static final long SEED = 0x5EED_2024L;

  @ParameterizedTest
  @ValueSource(longs = {0, 1, 15, 16, 255, 1L << 40, Long.MAX_VALUE})
  void generatedRecordHasGensortsLayout(long rowId) {
    byte[] record = new byte[TeraRecords.RECORD_BYTES + 3];
    TeraRecords.generate(SEED, rowId, record, 3);
    String context = "row " + rowId + ", seed " + SEED;

    assertEquals(0x00, record[3 + 10], context);
    assertEquals(0x11, record[3 + 11], context);
    String id = new String(record, 3 + 12, 32, StandardCharsets.US_ASCII);
    assertEquals(String.format("%32s", Long.toHexString(rowId).toUpperCase()).replace(' ', '0'),
        id, context);
    assertArrayEquals(new byte[] {(byte) 0x88, (byte) 0x99, (byte) 0xAA, (byte) 0xBB},
        Arrays.copyOfRange(record, 3 + 44, 3 + 48), context);
    for (int run = 0; run < 12; run++) {
      int start = 3 + 48 + 4 * run;
      char digit = (char) record[start];
      assertTrue("0123456789ABCDEF".indexOf(digit) >= 0, context + ", filler run " + run);
      for (int i = 1; i < 4; i++) {
        assertEquals(record[start], record[start + i], context + ", filler run " + run);
      }
    }
    assertArrayEquals(new byte[] {(byte) 0xCC, (byte) 0xDD, (byte) 0xEE, (byte) 0xFF},
        Arrays.copyOfRange(record, 3 + 96, 3 + 100), context);
    assertEquals(rowId, TeraRecords.rowId(record, 3), context);
  }

  @Test
  void recordsDependOnSeedAndRowIdOnly() {
    byte[] a = record(SEED, 12345);
    assertArrayEquals(a, record(SEED, 12345));
    assertFalse(Arrays.equals(a, 0, 10, record(SEED + 1, 12345), 0, 10), "the seed changes keys");
    assertFalse(Arrays.equals(a, 0, 10, record(SEED, 12346), 0, 10), "the row changes keys");
  }

  @Test
  void keysAreDistinctAndTheirFirstByteUniform() {
    int rows = 100_000;
    int[] firstBytes = new int[256];
    Set<String> keys = new HashSet<>();
    for (long row = 0; row < rows; row++) {
      byte[] record = record(SEED, row);
      firstBytes[record[0] & 0xFF]++;
      keys.add(TeraRecords.keyHex(record, 0));
    }
    assertEquals(rows, keys.size(), "80-bit random keys of 100,000 rows collide; seed " + SEED);
    // 390.6 expected a value, standard deviation about 20: 6 deviations either side.
    for (int b = 0; b < 256; b++) {
      assertTrue(firstBytes[b] > 270 && firstBytes[b] < 510,
          "first byte " + b + " in " + firstBytes[b] + " of " + rows + " keys; seed " + SEED);
    }
  }

  @Test
  void rowIdRefusesBytesThatAreNotOne() {
    byte[] record = record(SEED, 7);
    record[TeraRecords.ROW_ID_OFFSET + 31] = 'g';
    assertThrows(IllegalArgumentException.class, () -> TeraRecords.rowId(record, 0));
  }

  @Test
  void keysCompareAsUnsignedBytes() {
    byte[] low = new byte[10];
    byte[] high = new byte[10];
    low[0] = 0x7F;
    high[0] = (byte) 0x80;
    assertTrue(TeraRecords.compareKeys(low, 0, high, 0) < 0);
    assertTrue(TeraRecords.compareKeys(high, 0, low, 0) > 0);
    low[0] = high[0];
    low[9] = (byte) 0xFF;
    assertTrue(TeraRecords.compareKeys(low, 0, high, 0) > 0, "the last byte counts");
    assertEquals(0, TeraRecords.compareKeys(low, 0, low.clone(), 0));
  }

  // ---------------------------------------------------------------- checksum

  @Test
  void checksumIsTheSumOfEachRecordsCrc32() {
    TeraChecksum.Builder builder = new TeraChecksum.Builder();
    long expected = 0;
    for (long row = 0; row < 1000; row++) {
      byte[] record = record(SEED, row);
      CRC32 crc = new CRC32();
      crc.update(record);
      expected += crc.getValue();
      builder.add(record, 0);
    }
    TeraChecksum sum = builder.build();
    assertEquals(1000, sum.records());
    assertEquals(BigInteger.valueOf(expected), sum.sum());
    assertEquals(Long.toHexString(expected), sum.sumHex());
  }

  @Test
  void checksumIgnoresOrderButSeesEveryRecord() {
    TeraChecksum forward = checksum(0, 1, 2, 3, 4);
    assertEquals(forward, checksum(4, 2, 0, 3, 1));
    assertEquals(forward, checksum(0, 1).plus(checksum(2, 3, 4)));
    assertNotEquals(forward, checksum(0, 1, 2, 3), "a record lost");
    assertNotEquals(forward, checksum(0, 1, 2, 3, 4, 4), "a record twice");

    byte[] record = record(SEED, 2);
    byte[] key = Arrays.copyOfRange(record, 0, 10);
    byte[] value = Arrays.copyOfRange(record, 10, 100);
    TeraChecksum.Builder split = new TeraChecksum.Builder();
    split.add(key, value);
    assertEquals(checksum(2), split.build(), "key and value apart sum as the whole record");
    value[50] ^= 1;
    TeraChecksum.Builder damaged = new TeraChecksum.Builder();
    damaged.add(key, value);
    assertNotEquals(checksum(2), damaged.build(), "a flipped bit");
  }

  @Test
  void checksumCarriesIntoItsHigh64Bits() {
    TeraChecksum sum = new TeraChecksum(1, 0, -1L).plus(new TeraChecksum(2, 0, 1));
    assertEquals(new TeraChecksum(3, 1, 0), sum);
    assertEquals("10000000000000000", sum.sumHex());
    assertEquals(BigInteger.ONE.shiftLeft(64), sum.sum());
  }

  @Test
  void checksumParsesWhatItPrints() {
    TeraChecksum sum = new TeraChecksum(5, 0x1234, 0x89AB_CDEF_0123_4567L);
    assertEquals(sum.sum(), TeraChecksum.parseSum(sum.sumHex()));
    assertEquals(sum.sum(), TeraChecksum.parseSum("0x" + sum.sumHex().toUpperCase()));
    for (String bad : new String[] {"", "xyz", "12 34", "1".repeat(33)}) {
      assertThrows(IllegalArgumentException.class, () -> TeraChecksum.parseSum(bad), bad);
    }
  }

  private static byte[] record(long seed, long row) {
    byte[] record = new byte[TeraRecords.RECORD_BYTES];
    TeraRecords.generate(seed, row, record, 0);
    return record;
  }

  private static TeraChecksum checksum(long... rows) {
    TeraChecksum.Builder builder = new TeraChecksum.Builder();
    for (long row : rows) {
      builder.add(record(SEED, row), 0);
    }
    return builder.build();
  }
}
