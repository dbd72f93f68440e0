package io.gpusort.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.apache.spark.serializer.SerializationStream;
import org.apache.spark.serializer.SerializerInstance;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.catalyst.expressions.codegen.UnsafeRowWriter;
import org.apache.spark.unsafe.Platform;
import org.apache.spark.unsafe.types.UTF8String;
import org.junit.jupiter.api.Test;
import scala.Tuple2;
import scala.collection.Iterator;
import scala.reflect.ClassTag$;

/**
 * The global sort's chunks through their shuffle serializer: rows of many sizes with their key
 * words written as chunks (one larger than the chunk's target among them), read back in order
 * with the same bytes, keys and exactness, each chunk still valid while the next is read; a stream
 * that is not one of chunks, or is cut short, is refused.
 */
class RowChunkSerializerTest {
  private static final int NUM_WORDS = 2;

  private static UnsafeRow row(long id, String text) {
    UnsafeRowWriter writer = new UnsafeRowWriter(2, 64);
    writer.resetRowWriter();
    writer.write(0, id);
    writer.write(1, UTF8String.fromString(text));
    return writer.getRow().copy();
  }

  /** Each row's key words: two words derived from its id. */
  private static long[] words(long id) {
    return new long[] {id * 31, ~id};
  }

  private static byte[] write(List<RowChunk> chunks) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    SerializerInstance instance = new RowChunkSerializer().newInstance();
    SerializationStream out = instance.serializeStream(bytes);
    for (int i = 0; i < chunks.size(); i++) {
      out.writeKey(i, ClassTag$.MODULE$.Any());
      out.writeValue(chunks.get(i), ClassTag$.MODULE$.Any());
    }
    out.close();
    return bytes.toByteArray();
  }

  @Test
  void chunksComeBackAsWritten() {
    SplittableRandom random = new SplittableRandom(7);
    List<UnsafeRow> rows = new ArrayList<>();
    for (int i = 0; i < 20000; i++) {
      int length = i == 1234 ? RowChunk.TARGET_BYTES + 100 : random.nextInt(200);
      rows.add(row(i, "x".repeat(length)));
    }
    List<RowChunk> chunks = new ArrayList<>();
    RowChunk chunk = new RowChunk(NUM_WORDS, 0);
    for (UnsafeRow r : rows) {
      chunk.add(words(r.getLong(0)), r);
      if (chunk.isFull()) {
        chunks.add(chunk);
        chunk = new RowChunk(NUM_WORDS, 1000);
      }
    }
    chunk.markKeysInexact();
    chunks.add(chunk);
    assertTrue(chunks.size() >= 3, "chunks: " + chunks.size());

    byte[] stream = write(chunks);
    Iterator<Tuple2<Object, Object>> read = new RowChunkSerializer().newInstance()
        .deserializeStream(new ByteArrayInputStream(stream)).asKeyValueIterator();
    int next = 0;
    RowChunk previous = null;
    byte[] previousCopy = null;
    UnsafeRow readRow = new UnsafeRow(2);
    for (int c = 0; c < chunks.size(); c++) {
      assertTrue(read.hasNext(), "chunk " + c);
      RowChunk back = (RowChunk) read.next()._2();
      if (previous != null) {
        // The chunk before is still as it was while this one was read.
        byte[] now = java.util.Arrays.copyOf(previous.bytes(), previous.usedBytes());
        assertTrue(java.util.Arrays.equals(previousCopy, now), "chunk " + (c - 1) + " changed");
      }
      assertEquals(chunks.get(c).numRows(), back.numRows());
      assertEquals(chunks.get(c).usedBytes(), back.usedBytes());
      assertEquals(NUM_WORDS, back.numWords());
      assertEquals(c != chunks.size() - 1, back.keysExact(), "chunk " + c + " exactness");
      long at = Platform.BYTE_ARRAY_OFFSET;
      for (int j = 0; j < back.numRows(); j++) {
        UnsafeRow expected = rows.get(next++);
        long[] w = words(expected.getLong(0));
        for (int k = 0; k < NUM_WORDS; k++) {
          assertEquals(w[k], Platform.getLong(back.bytes(), at + 8L * k));
        }
        at += 8L * NUM_WORDS;
        int size = Platform.getInt(back.bytes(), at);
        readRow.pointTo(back.bytes(), at + RowChunk.SIZE_BYTES, size);
        assertEquals(expected, readRow, "row " + (next - 1));
        at += RowChunk.SIZE_BYTES + size;
      }
      assertEquals(Platform.BYTE_ARRAY_OFFSET + back.usedBytes(), at);
      previous = back;
      previousCopy = java.util.Arrays.copyOf(back.bytes(), back.usedBytes());
    }
    assertFalse(read.hasNext());
    assertEquals(rows.size(), next);
  }

  private static UnsafeRow fixedRow(long key, long small, long random, Long nullable) {
    UnsafeRowWriter writer = new UnsafeRowWriter(4, 0);
    writer.resetRowWriter();
    writer.write(0, key);
    writer.write(1, small);
    writer.write(2, random);
    if (nullable == null) {
      writer.setNullAt(3);
    } else {
      writer.write(3, nullable);
    }
    return writer.getRow().copy();
  }

  private static byte[] write(List<RowChunk> chunks, boolean pack) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    SerializationStream out = new RowChunkSerializer(pack).newInstance().serializeStream(bytes);
    for (RowChunk chunk : chunks) {
      out.writeValue(chunk, ClassTag$.MODULE$.Any());
    }
    out.close();
    return bytes.toByteArray();
  }

  /**
   * Chunks of rows of one size (a sorted key, small numbers, random words, a column mostly null,
   * extreme values whose differences wrap) with 0 or 2 key words: packed, they take fewer bytes
   * and read back to exactly the bytes written; a chunk of rows of different sizes goes unpacked.
   */
  @Test
  void rowsOfOneSizeArePackedByColumnAndReadBackUnchanged() {
    SplittableRandom random = new SplittableRandom(11);
    for (int numWords : new int[] {0, 2}) {
      List<RowChunk> chunks = new ArrayList<>();
      long key = Long.MIN_VALUE + 5;
      for (int c = 0; c < 6; c++) {
        RowChunk chunk = new RowChunk(numWords, 0);
        int numRows = c == 5 ? 1 : 1 + random.nextInt(5000);
        for (int i = 0; i < numRows; i++) {
          key += random.nextLong(1L << 40);
          long extreme = (i & 1) == 0 ? Long.MAX_VALUE : Long.MIN_VALUE;
          Long nullable = random.nextInt(10) == 0 ? (Long) random.nextLong() : null;
          UnsafeRow r = fixedRow(key, random.nextLong(1000), c == 3 ? extreme
              : random.nextLong(), nullable);
          chunk.add(new long[] {key, c == 4 ? 7 : random.nextLong()}, r);
        }
        chunks.add(chunk);
      }
      byte[] plain = write(chunks, false);
      byte[] packed = write(chunks, true);
      assertTrue(packed.length < plain.length * 0.85,
          numWords + " words: packed " + packed.length + " of " + plain.length);
      RowChunkSerializer.Reader reader =
          new RowChunkSerializer.Reader(new ByteArrayInputStream(packed));
      for (RowChunk chunk : chunks) {
        RowChunk back = reader.next();
        assertEquals(chunk.numRows(), back.numRows());
        assertEquals(chunk.usedBytes(), back.usedBytes());
        assertTrue(java.util.Arrays.equals(chunk.bytes(), 0, chunk.usedBytes(), back.bytes(), 0,
            back.usedBytes()), numWords + " words, a chunk of " + chunk.numRows() + " rows");
      }
      assertNull(reader.next());
    }
    RowChunk mixed = new RowChunk(0, 0);
    mixed.add(new long[0], row(1, "a"));
    mixed.add(new long[0], row(2, "a longer string than eight bytes"));
    assertEquals(-1, mixed.uniformRowSize());
    assertEquals(write(List.of(mixed), false).length, write(List.of(mixed), true).length);
  }

  /** A packed chunk whose widths or length were damaged is refused, not read as other rows. */
  @Test
  void aDamagedPackedChunkIsRefused() {
    RowChunk chunk = new RowChunk(0, 0);
    for (int i = 0; i < 100; i++) {
      chunk.add(new long[0], fixedRow(i * 1000L, i, 5, null));
    }
    byte[] packed = write(List.of(chunk), true);
    // Header: magic, rows, words, flags, bytes, row size, packed bytes; then the first width.
    int firstWidth = 7 * 4;
    byte[] wide = packed.clone();
    wide[firstWidth] = 9;
    assertThrows(IllegalStateException.class,
        () -> new RowChunkSerializer.Reader(new ByteArrayInputStream(wide)).next());
    byte[] longer = packed.clone();
    longer[firstWidth] = (byte) (longer[firstWidth] + 1);
    assertThrows(IllegalStateException.class,
        () -> new RowChunkSerializer.Reader(new ByteArrayInputStream(longer)).next());
  }

  @Test
  void aStreamOfSomethingElseOrCutShortIsRefused() {
    RowChunk chunk = new RowChunk(NUM_WORDS, 0);
    chunk.add(words(1), row(1, "one"));
    byte[] stream = write(List.of(chunk));
    byte[] cut = java.util.Arrays.copyOf(stream, stream.length - 3);
    RowChunkSerializer.Reader shortReader =
        new RowChunkSerializer.Reader(new ByteArrayInputStream(cut));
    assertThrows(java.io.UncheckedIOException.class, shortReader::next);
    byte[] other = stream.clone();
    other[0] ^= 0x55;
    RowChunkSerializer.Reader otherReader =
        new RowChunkSerializer.Reader(new ByteArrayInputStream(other));
    assertThrows(IllegalStateException.class, otherReader::next);
    assertNull(new RowChunkSerializer.Reader(new ByteArrayInputStream(new byte[0])).next());
    assertThrows(IllegalArgumentException.class, () -> new RowChunkSerializer().newInstance()
        .serializeStream(new ByteArrayOutputStream()).writeValue("a row", ClassTag$.MODULE$.Any()));
  }
}
