package io.gpusort.examples;

import io.gpusort.examples.TeraScan.TeraSplit;
import io.gpusort.sql.ByteSliceVector;
import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.Path;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.codegen.UnsafeRowWriter;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.util.SerializableConfiguration;

/**
 * Reads the pieces of TeraSort files ({@link TeraSplit}) as columnar batches: up to {@link
 * #BATCH_RECORDS} records at a time, read in one call into one buffer that the piece reuses, and
 * each column a {@link ByteSliceVector} of slices of that buffer (keys at {@code 100 i}, 10 bytes;
 * values at {@code 100 i + 10}, 90 bytes; no nulls), so no value is copied until a consumer asks
 * for it. The batch, its vectors and their offsets and lengths are the same objects for every
 * batch of a piece: a batch is valid until the next {@code next()}, as with Spark's own readers.
 * Rows, where Spark asks for them, are one reused {@code UnsafeRow} a record.
 */
final class TeraReaders implements PartitionReaderFactory {
  /**
   * Records a batch holds at most: a buffer of 409,600 bytes, large enough that a read call is
   * cheap against the bytes it moves and small enough to stay in the CPU's caches.
   */
  static final int BATCH_RECORDS = 4096;

  /** Pieces this process read in batches of the keys alone (as GpuSort samples), for tests. */
  private static final AtomicLong KEY_BATCH_READS = new AtomicLong();

  private final Broadcast<SerializableConfiguration> conf;
  private final StructType readSchema;

  TeraReaders(Broadcast<SerializableConfiguration> conf, StructType readSchema) {
    this.conf = conf;
    this.readSchema = readSchema;
  }

  /** Where column {@code name}'s bytes start in a record. */
  static int fieldOffset(String name) {
    return name.equals(TeraRecords.KEY_COLUMN) ? 0 : TeraRecords.KEY_BYTES;
  }

  /** The bytes of column {@code name} in a record. */
  static int fieldBytes(String name) {
    return name.equals(TeraRecords.KEY_COLUMN) ? TeraRecords.KEY_BYTES : TeraRecords.VALUE_BYTES;
  }

  @Override
  public boolean supportColumnarReads(InputPartition partition) {
    return true;
  }

  /** Pieces this process read in batches of the key column alone. */
  static long keyBatchReads() {
    return KEY_BATCH_READS.get();
  }

  @Override
  public PartitionReader<ColumnarBatch> createColumnarReader(InputPartition partition) {
    if (readSchema.size() == 1 && readSchema.fieldNames()[0].equals(TeraRecords.KEY_COLUMN)) {
      KEY_BATCH_READS.incrementAndGet();
    }
    return new BatchReader(open(partition), readSchema);
  }

  @Override
  public PartitionReader<InternalRow> createReader(InputPartition partition) {
    return new RowReader(open(partition), readSchema);
  }

  private RecordBlocks open(InputPartition partition) {
    try {
      // With no column to read (a count), the records need only be counted.
      return new RecordBlocks((TeraSplit) partition, conf.value().value(),
          readSchema.size() > 0);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** A piece's records, a block at a time, into one buffer. */
  private static final class RecordBlocks implements Closeable {
    private final TeraSplit split;
    private final FSDataInputStream in;
    private final byte[] buffer;
    private long recordsLeft;

    /** Opens the piece's file at its first record, unless {@code readBytes} is false. */
    RecordBlocks(TeraSplit split, Configuration conf, boolean readBytes) throws IOException {
      this.split = split;
      this.recordsLeft = split.numRecords();
      int capacity = (int) Math.min(BATCH_RECORDS, split.numRecords());
      this.buffer = new byte[readBytes ? capacity * TeraRecords.RECORD_BYTES : 0];
      if (readBytes) {
        Path path = new Path(split.file());
        in = path.getFileSystem(conf).open(path);
        in.seek(split.startByte());
      } else {
        in = null;
      }
    }

    /** The most records a block holds. */
    int capacity() {
      return (int) Math.min(BATCH_RECORDS, split.numRecords());
    }

    byte[] buffer() {
      return buffer;
    }

    /** Reads the next block into the buffer's start; returns its records, 0 at the end. */
    int next() throws IOException {
      int records = (int) Math.min(BATCH_RECORDS, recordsLeft);
      if (records > 0 && in != null) {
        try {
          in.readFully(buffer, 0, records * TeraRecords.RECORD_BYTES);
        } catch (EOFException e) {
          long end = split.startByte() + split.numRecords() * TeraRecords.RECORD_BYTES;
          throw new EOFException(split.file() + " ended before byte " + end
              + ", where it ended when it was listed: it changed while being read");
        }
      }
      recordsLeft -= records;
      return records;
    }

    @Override
    public void close() throws IOException {
      if (in != null) {
        in.close();
      }
    }
  }

  /** Each block as one batch of byte-slice columns over the block's buffer. */
  private static final class BatchReader implements PartitionReader<ColumnarBatch> {
    private final RecordBlocks blocks;
    private final ColumnarBatch batch;

    BatchReader(RecordBlocks blocks, StructType readSchema) {
      this.blocks = blocks;
      int capacity = blocks.capacity();
      ColumnVector[] vectors = new ColumnVector[readSchema.size()];
      for (int c = 0; c < vectors.length; c++) {
        String name = readSchema.fields()[c].name();
        int[] offsets = new int[capacity];
        int[] lengths = new int[capacity];
        for (int i = 0; i < capacity; i++) {
          offsets[i] = i * TeraRecords.RECORD_BYTES + fieldOffset(name);
          lengths[i] = fieldBytes(name);
        }
        // Every block goes to the same buffer at the same offsets: the vectors never move.
        vectors[c] = new ByteSliceVector(DataTypes.BinaryType, blocks.buffer(), offsets,
            lengths, 0);
      }
      batch = new ColumnarBatch(vectors);
    }

    @Override
    public boolean next() throws IOException {
      int records = blocks.next();
      batch.setNumRows(records);
      return records > 0;
    }

    @Override
    public ColumnarBatch get() {
      return batch;
    }

    @Override
    public void close() throws IOException {
      blocks.close();
    }
  }

  /** Each record as the same {@code UnsafeRow}, rewritten for every record. */
  private static final class RowReader implements PartitionReader<InternalRow> {
    private final RecordBlocks blocks;
    private final int[] fieldOffsets;
    private final int[] fieldLengths;
    private final UnsafeRowWriter writer;
    private int blockRecords;
    private int record;

    RowReader(RecordBlocks blocks, StructType readSchema) {
      this.blocks = blocks;
      int numFields = readSchema.size();
      fieldOffsets = new int[numFields];
      fieldLengths = new int[numFields];
      int variableBytes = 0;
      for (int f = 0; f < numFields; f++) {
        String name = readSchema.fields()[f].name();
        fieldOffsets[f] = fieldOffset(name);
        fieldLengths[f] = fieldBytes(name);
        variableBytes += (fieldLengths[f] + 7) & ~7;
      }
      writer = new UnsafeRowWriter(numFields, variableBytes);
    }

    @Override
    public boolean next() throws IOException {
      record++;
      if (record >= blockRecords) {
        blockRecords = blocks.next();
        record = 0;
        if (blockRecords == 0) {
          return false;
        }
      }
      byte[] buffer = blocks.buffer();
      int start = record * TeraRecords.RECORD_BYTES;
      writer.reset();
      writer.zeroOutNullBytes();
      for (int f = 0; f < fieldOffsets.length; f++) {
        writer.write(f, buffer, start + fieldOffsets[f], fieldLengths[f]);
      }
      return true;
    }

    @Override
    public InternalRow get() {
      return writer.getRow();
    }

    @Override
    public void close() throws IOException {
      blocks.close();
    }
  }
}
