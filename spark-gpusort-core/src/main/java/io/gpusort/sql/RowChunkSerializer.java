package io.gpusort.sql;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.NoSuchElementException;
import org.apache.spark.serializer.DeserializationStream;
import org.apache.spark.serializer.SerializationStream;
import org.apache.spark.serializer.Serializer;
import org.apache.spark.serializer.SerializerInstance;
import scala.Tuple2;
import scala.collection.AbstractIterator;
import scala.collection.Iterator;
import scala.reflect.ClassTag;

/**
 * The shuffle's serializer for the blocks of a global sort: each record is a {@link RowChunk},
 * written as a short header and its bytes in one bulk write (Spark compresses the stream with its
 * shuffle codec around it), and read back the same way into a buffer the read side reuses. Keys
 * (the output partition, which the map side already chose) are not written.
 *
 * <p>With packing on, a chunk whose rows all have one size (fixed-width columns) is written by
 * column ({@link PackedColumns}) where that is smaller, and unpacked to the same bytes when read.
 *
 * <p>A record is self-contained, so serialized records may be moved and concatenated, which lets
 * Spark use its serialized shuffle for many output partitions. A chunk read back is valid until the
 * next one is read.
 */
final class RowChunkSerializer extends Serializer implements Serializable {
  private static final long serialVersionUID = 1L;
  /** "GSC1": a chunk's first bytes, to tell a stream that is not one apart. */
  static final int MAGIC = 0x47534331;
  private static final int KEYS_INEXACT = 1;
  private static final int PACKED = 2;

  /** Whether chunks of rows of one size are packed by column ({@link PackedColumns}). */
  private final boolean pack;

  /** A serializer that packs chunks of rows of one size where that is smaller. */
  RowChunkSerializer() {
    this(true);
  }

  RowChunkSerializer(boolean pack) {
    this.pack = pack;
  }

  @Override
  public SerializerInstance newInstance() {
    return new Instance(pack);
  }

  @Override
  public boolean supportsRelocationOfSerializedObjects() {
    return true;
  }

  private static final class Instance extends SerializerInstance {
    private final boolean pack;

    Instance(boolean pack) {
      this.pack = pack;
    }

    @Override
    public <T> ByteBuffer serialize(T t, ClassTag<T> tag) {
      throw new UnsupportedOperationException("row chunks travel only as shuffle streams");
    }

    @Override
    public <T> T deserialize(ByteBuffer bytes, ClassTag<T> tag) {
      throw new UnsupportedOperationException("row chunks travel only as shuffle streams");
    }

    @Override
    public <T> T deserialize(ByteBuffer bytes, ClassLoader loader, ClassTag<T> tag) {
      throw new UnsupportedOperationException("row chunks travel only as shuffle streams");
    }

    @Override
    public SerializationStream serializeStream(OutputStream s) {
      return new Writer(s, pack);
    }

    @Override
    public DeserializationStream deserializeStream(InputStream s) {
      return new Reader(s);
    }
  }

  /** Writes chunks, packed where {@code pack} and smaller; keys are dropped. */
  static final class Writer extends SerializationStream {
    private final DataOutputStream out;
    private final boolean pack;
    private byte[] widths = new byte[0];
    private byte[] packed = new byte[0];

    Writer(OutputStream out, boolean pack) {
      this.out = new DataOutputStream(out);
      this.pack = pack;
    }

    @Override
    public <T> SerializationStream writeObject(T t, ClassTag<T> tag) {
      if (!(t instanceof RowChunk chunk)) {
        throw new IllegalArgumentException("a row chunk stream cannot write "
            + (t == null ? "null" : t.getClass().getName()));
      }
      try {
        int packedBytes = pack ? packedBytes(chunk) : -1;
        out.writeInt(MAGIC);
        out.writeInt(chunk.numRows());
        out.writeInt(chunk.numWords());
        out.writeInt((chunk.keysExact() ? 0 : KEYS_INEXACT) | (packedBytes >= 0 ? PACKED : 0));
        out.writeInt(chunk.usedBytes());
        if (packedBytes >= 0) {
          out.writeInt(chunk.uniformRowSize());
          out.writeInt(packedBytes);
          out.write(packed, 0, packedBytes);
        } else {
          out.write(chunk.bytes(), 0, chunk.usedBytes());
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      return this;
    }

    /**
     * Packs {@code chunk} into {@link #packed} and returns the packed size, or -1 where its rows
     * differ in size or packing would not make it smaller.
     */
    private int packedBytes(RowChunk chunk) {
      int rowSize = chunk.uniformRowSize();
      int numRows = chunk.numRows();
      if (rowSize < 0 || rowSize % 8 != 0 || numRows < 2) {
        return -1;
      }
      int numColumns = PackedColumns.numColumns(chunk.numWords(), rowSize);
      if (widths.length < numColumns) {
        widths = new byte[numColumns];
      }
      long size = PackedColumns.packedBytes(chunk.bytes(), numRows, chunk.numWords(), rowSize,
          widths);
      if (size >= chunk.usedBytes()) {
        return -1;
      }
      if (packed.length < size + PackedColumns.SLACK) {
        packed = new byte[(int) size + PackedColumns.SLACK];
      }
      return PackedColumns.pack(chunk.bytes(), numRows, chunk.numWords(), rowSize, widths,
          packed);
    }

    @Override
    public <T> SerializationStream writeKey(T key, ClassTag<T> tag) {
      return this;
    }

    @Override
    public <T> SerializationStream writeValue(T value, ClassTag<T> tag) {
      return writeObject(value, tag);
    }

    @Override
    public void flush() {
      try {
        out.flush();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }

    @Override
    public void close() {
      try {
        out.close();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }

  /**
   * Reads chunks into two buffers in turn: each chunk stays valid while the next is read (an
   * iterator that looks one ahead), until the one after.
   */
  static final class Reader extends DeserializationStream {
    private final DataInputStream in;
    private final byte[][] buffers = {new byte[0], new byte[0]};
    private byte[] packed = new byte[0];
    private int turn;

    Reader(InputStream in) {
      this.in = new DataInputStream(in);
    }

    /** The next chunk, or null at the end of the stream. */
    RowChunk next() {
      try {
        int magic;
        try {
          magic = in.readInt();
        } catch (EOFException end) {
          return null;
        }
        if (magic != MAGIC) {
          throw new IllegalStateException(String.format(
              "a shuffle block of GpuSort's global sort starts with %08x, not a row chunk", magic));
        }
        int numRows = in.readInt();
        int numWords = in.readInt();
        int flags = in.readInt();
        int used = in.readInt();
        if (numRows < 0 || numWords < 0 || used < 0) {
          throw new IllegalStateException("a row chunk of " + numRows + " rows, " + numWords
              + " key words and " + used + " bytes");
        }
        turn ^= 1;
        byte[] buffer = buffers[turn];
        if (buffer.length < used) {
          buffer = new byte[Math.max(used, Math.min(Integer.MAX_VALUE - 64,
              2 * buffer.length))];
          buffers[turn] = buffer;
        }
        if ((flags & PACKED) != 0) {
          readPacked(buffer, numRows, numWords, used);
        } else {
          in.readFully(buffer, 0, used);
        }
        return new RowChunk(numWords, buffer, used, numRows, (flags & KEYS_INEXACT) == 0);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }

    /** Reads a packed chunk of {@code used} bytes unpacked into {@code buffer}. */
    private void readPacked(byte[] buffer, int numRows, int numWords, int used)
        throws IOException {
      int rowSize = in.readInt();
      int packedBytes = in.readInt();
      if (rowSize < 0 || rowSize % 8 != 0 || packedBytes < 0 || (long) numRows
          * RowChunk.entryBytes(numWords, rowSize) != used) {
        throw new IllegalStateException("a packed row chunk of " + numRows + " rows of "
            + rowSize + " bytes in " + used + " bytes (" + packedBytes + " packed)");
      }
      if (packed.length < packedBytes + PackedColumns.SLACK) {
        packed = new byte[packedBytes + PackedColumns.SLACK];
      }
      in.readFully(packed, 0, packedBytes);
      PackedColumns.unpack(packed, packedBytes, numRows, numWords, rowSize, buffer);
    }

    @Override
    public <T> T readObject(ClassTag<T> tag) {
      RowChunk chunk = next();
      if (chunk == null) {
        throw new NoSuchElementException("the end of a row chunk stream");
      }
      @SuppressWarnings("unchecked")
      T t = (T) chunk;
      return t;
    }

    @Override
    public <T> T readKey(ClassTag<T> tag) {
      return null;
    }

    @Override
    public Iterator<Object> asIterator() {
      return chunks(false);
    }

    @Override
    @SuppressWarnings({"unchecked", "rawtypes"})
    public Iterator<Tuple2<Object, Object>> asKeyValueIterator() {
      return (Iterator) chunks(true);
    }

    private Iterator<Object> chunks(boolean pairs) {
      return new AbstractIterator<>() {
        private RowChunk next;
        private boolean done;

        @Override
        public boolean hasNext() {
          if (next == null && !done) {
            next = Reader.this.next();
            if (next == null) {
              done = true;
              Reader.this.close();
            }
          }
          return next != null;
        }

        @Override
        public Object next() {
          if (!hasNext()) {
            throw new NoSuchElementException();
          }
          RowChunk chunk = next;
          next = null;
          return pairs ? new Tuple2<>(null, chunk) : chunk;
        }
      };
    }

    @Override
    public void close() {
      try {
        in.close();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }
}
