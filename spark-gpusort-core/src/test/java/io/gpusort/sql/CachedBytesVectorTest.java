package io.gpusort.sql;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.unsafe.Platform;
import org.junit.jupiter.api.Test;

/**
 * A cached string or binary column read where it lies, from buffers laid out by hand as Spark's
 * cache lays them out (null count, null positions, scheme id, values): each scheme's values and
 * nulls as written, each value's bytes copied out whole, and a buffer that does not add up
 * refused with an error instead of read past its end.
 */
class CachedBytesVectorTest {
  /** A column buffer in native byte order, written field by field. */
  private static final class Column {
    private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();

    Column putInt(int value) {
      bytes.writeBytes(ByteBuffer.allocate(4).order(ByteOrder.nativeOrder()).putInt(value)
          .array());
      return this;
    }

    Column putShort(int value) {
      bytes.writeBytes(ByteBuffer.allocate(2).order(ByteOrder.nativeOrder())
          .putShort((short) value).array());
      return this;
    }

    Column putValue(String value) {
      byte[] utf8 = value.getBytes(StandardCharsets.UTF_8);
      putInt(utf8.length);
      bytes.writeBytes(utf8);
      return this;
    }

    byte[] array() {
      return bytes.toByteArray();
    }
  }

  /** Nulls at rows 1 and 3 of 5, then the scheme id. */
  private static Column withNulls(int scheme) {
    return new Column().putInt(2).putInt(1).putInt(3).putInt(scheme);
  }

  private static void assertValues(List<String> expected, CachedBytesVector vector) {
    for (int r = 0; r < expected.size(); r++) {
      String value = expected.get(r);
      if (value == null) {
        assertTrue(vector.isNullAt(r), "row " + r + " null");
        assertNull(vector.getUTF8String(r));
        continue;
      }
      byte[] utf8 = value.getBytes(StandardCharsets.UTF_8);
      assertEquals(utf8.length, vector.length(r), "row " + r + " length");
      assertEquals(value, vector.getUTF8String(r).toString(), "row " + r);
      // Copied out: the word loop and the bulk copy, with the next byte left as it was.
      long address = Platform.allocateMemory(utf8.length + 1L);
      try {
        Platform.putByte(null, address + utf8.length, (byte) 0x5a);
        vector.copyTo(r, address);
        byte[] copied = new byte[utf8.length + 1];
        Platform.copyMemory(null, address, copied, Platform.BYTE_ARRAY_OFFSET, copied.length);
        assertArrayEquals(utf8, Arrays.copyOf(copied, utf8.length), "row " + r + " copied");
        assertEquals((byte) 0x5a, copied[utf8.length], "row " + r + ": the byte after it");
      } finally {
        Platform.freeMemory(address);
      }
    }
  }

  @Test
  void valuesAsTheyAreWithNulls() {
    String longValue = "ü".repeat(100);
    byte[] buffer = withNulls(0).putValue("").putValue("abcdefghi").putValue(longValue).array();
    CachedBytesVector vector = CachedBytesVector.decode(buffer, 5, DataTypes.StringType);
    assertEquals(2, vector.numNulls());
    assertValues(Arrays.asList("", null, "abcdefghi", null, longValue), vector);
  }

  @Test
  void binariesHaveNoSchemeId() {
    byte[] buffer = new Column().putInt(0).putValue("xy").putValue("z").array();
    CachedBytesVector vector = CachedBytesVector.decode(buffer, 2, DataTypes.BinaryType);
    assertArrayEquals("xy".getBytes(StandardCharsets.UTF_8), vector.getBinary(0));
    assertArrayEquals("z".getBytes(StandardCharsets.UTF_8), vector.getBinary(1));
  }

  @Test
  void runsGiveEachRowItsRunsValue() {
    byte[] buffer = withNulls(1).putValue("aa").putInt(2).putValue("b").putInt(1).array();
    CachedBytesVector vector = CachedBytesVector.decode(buffer, 5, DataTypes.StringType);
    assertValues(Arrays.asList("aa", null, "aa", null, "b"), vector);
  }

  @Test
  void dictionaryIndexesNameTheirValues() {
    byte[] buffer = withNulls(2).putInt(2).putValue("zero").putValue("one")
        .putShort(1).putShort(0).putShort(1).array();
    CachedBytesVector vector = CachedBytesVector.decode(buffer, 5, DataTypes.StringType);
    assertValues(Arrays.asList("one", null, "zero", null, "one"), vector);
  }

  @Test
  void aBufferThatDoesNotAddUpIsRefused() {
    // A length past the end, bytes left over, a short buffer, a run of no rows, an index past
    // the dictionary, a scheme not read here.
    List<byte[]> malformed = List.of(
        new Column().putInt(0).putInt(0).putInt(1000).array(),
        new Column().putInt(0).putInt(0).putValue("a").putValue("b").putInt(7).array(),
        new Column().putInt(0).putInt(0).putValue("a").array(),
        new Column().putInt(0).putInt(1).putValue("a").putInt(0).array(),
        new Column().putInt(0).putInt(2).putInt(1).putValue("a").putShort(0).putShort(3).array(),
        new Column().putInt(0).putInt(5).putValue("a").putValue("b").array());
    for (int i = 0; i < malformed.size(); i++) {
      byte[] buffer = malformed.get(i);
      IllegalStateException e = assertThrows(IllegalStateException.class,
          () -> CachedBytesVector.decode(buffer, 2, DataTypes.StringType), "buffer " + i);
      assertTrue(e.getMessage().contains("spark.gpusort.intake.cacheBatches=false"),
          e.getMessage());
    }
    // Null positions past the buffer.
    byte[] nulls = new Column().putInt(1000).putInt(0).array();
    assertThrows(IllegalStateException.class,
        () -> CachedBytesVector.decode(nulls, 2, DataTypes.StringType));
  }
}
