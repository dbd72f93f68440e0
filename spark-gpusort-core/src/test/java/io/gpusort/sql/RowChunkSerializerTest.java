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
