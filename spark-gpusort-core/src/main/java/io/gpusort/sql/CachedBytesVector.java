package io.gpusort.sql;

import io.gpusort.memory.Tally;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.unsafe.Platform;

/**
 * A string or binary column of one batch of Spark's in-memory cache, read where it lies: each
 * value is named by its offset and length in the cached column's buffer, and its bytes are copied
 * once, by the row writer, into the row ({@link #copyTo}). Spark 4.0's cache hands such a column
 * out only as rows, each made by a per-row accessor and copied again by the sort.
 *
 * <p>The cached column's layout (Spark's {@code DefaultCachedBatchSerializer}, the same from 3.x
 * through 4.x), in native byte order: the null count {@code N}, the {@code N} null rows'
 * positions in ascending order, the compression scheme's id (a string column's only), then the
 * non-null values in row order, each as its byte length (an int) and its bytes. Scheme 0 stores
 * them as they are; 1 (run length) stores each run's value once, followed by the run's length;
 * 2 (dictionary) stores the number of distinct values, the values, then a short index per row. A
 * string column takes any of the three; a binary column is stored as scheme 0 stores values,
 * without a scheme id.
 */
final class CachedBytesVector extends ByteSliceVector {
  private static final int PASS_THROUGH = 0;
  private static final int RUN_LENGTH = 1;
  private static final int DICTIONARY = 2;

  /** Columns decoded per scheme in this process (for tests). */
  private static final Tally[] DECODED = {new Tally(), new Tally(), new Tally()};

  private CachedBytesVector(DataType type, byte[] buffer, int[] offsets, int[] lengths,
      int numNulls) {
    super(type, buffer, offsets, lengths, numNulls);
  }

  /**
   * The {@code numRows} values of the cached column {@code buffer} of {@code type} (a string or
   * binary type).
   *
   * @throws IllegalStateException where the buffer is not laid out as described above: a
   *     compression scheme this does not read, or values that do not add up to its rows
   */
  static CachedBytesVector decode(byte[] buffer, int numRows, DataType type) {
    Reader in = new Reader(buffer);
    int numNulls = in.nextInt();
    int nullsAt = in.position;
    in.skip(4L * numNulls);
    // A binary column is never compressed: no scheme id.
    int scheme = type instanceof BinaryType ? PASS_THROUGH : in.nextInt();
    int[] offsets = new int[numRows];
    int[] lengths = new int[numRows];
    int nextNull = 0;
    int nextNullRow = numNulls > 0 ? in.intAt(nullsAt) : numRows;
    int[] dictionaryOffsets = null;
    int[] dictionaryLengths = null;
    if (scheme == DICTIONARY) {
      int size = in.nextInt();
      if (size < 0) {
        throw in.malformed("a dictionary of " + size + " values");
      }
      dictionaryOffsets = new int[size];
      dictionaryLengths = new int[size];
      for (int d = 0; d < size; d++) {
        dictionaryLengths[d] = in.nextLength();
        dictionaryOffsets[d] = in.position;
        in.skip(dictionaryLengths[d]);
      }
    } else if (scheme != PASS_THROUGH && scheme != RUN_LENGTH) {
      throw new IllegalStateException("a cached " + type.simpleString()
          + " column compressed by scheme " + scheme + ", which GpuSort does not read; set "
          + "spark.gpusort.intake.cacheBatches=false");
    }
    int runLeft = 0;
    int runOffset = 0;
    int runBytes = 0;
    for (int r = 0; r < numRows; r++) {
      if (r == nextNullRow) {
        lengths[r] = -1;
        nextNull++;
        nextNullRow = nextNull < numNulls ? in.intAt(nullsAt + 4 * nextNull) : numRows;
        continue;
      }
      switch (scheme) {
        case PASS_THROUGH -> {
          int length = in.nextLength();
          lengths[r] = length;
          offsets[r] = in.position;
          in.skip(length);
        }
        case RUN_LENGTH -> {
          if (runLeft == 0) {
            runBytes = in.nextLength();
            runOffset = in.position;
            in.skip(runBytes);
            runLeft = in.nextInt();
            if (runLeft <= 0) {
              throw in.malformed("a run of " + runLeft + " rows");
            }
          }
          lengths[r] = runBytes;
          offsets[r] = runOffset;
          runLeft--;
        }
        default -> {
          int index = in.nextShort();
          if (index < 0 || index >= dictionaryLengths.length) {
            throw in.malformed("index " + index + " in a dictionary of "
                + dictionaryLengths.length + " values");
          }
          lengths[r] = dictionaryLengths[index];
          offsets[r] = dictionaryOffsets[index];
        }
      }
    }
    if (in.position != buffer.length || runLeft != 0) {
      throw new IllegalStateException("a cached " + type.simpleString() + " column of "
          + numRows + " rows holds " + (buffer.length - in.position) + " bytes more than its "
          + "values; set spark.gpusort.intake.cacheBatches=false");
    }
    DECODED[scheme].increment();
    return new CachedBytesVector(type, buffer, offsets, lengths, numNulls);
  }

  /**
   * Reads a cached column's buffer in native byte order, straight from the array: each read
   * checked against the buffer's end (a malformed buffer throws; nothing is read past it), without
   * a {@code ByteBuffer}'s position bookkeeping on every value.
   */
  private static final class Reader {
    private final byte[] buffer;
    private int position;

    Reader(byte[] buffer) {
      this.buffer = buffer;
    }

    /** The int at {@code at}, which must lie within the buffer. */
    int intAt(int at) {
      if (at < 0 || at > buffer.length - 4) {
        throw malformed("an int at " + at);
      }
      return Platform.getInt(buffer, Platform.BYTE_ARRAY_OFFSET + at);
    }

    int nextInt() {
      int value = intAt(position);
      position += 4;
      return value;
    }

    /** A value's length: an int, not negative, whose bytes lie within the buffer. */
    int nextLength() {
      int length = nextInt();
      if (length < 0 || length > buffer.length - position) {
        throw malformed("a value of " + length + " bytes at " + position);
      }
      return length;
    }

    int nextShort() {
      if (position > buffer.length - 2) {
        throw malformed("a short at " + position);
      }
      int value = Platform.getShort(buffer, Platform.BYTE_ARRAY_OFFSET + position);
      position += 2;
      return value;
    }

    /** Moves past {@code bytes}, which must lie within the buffer. */
    void skip(long bytes) {
      if (bytes < 0 || bytes > buffer.length - position) {
        throw malformed(bytes + " bytes at " + position);
      }
      position += (int) bytes;
    }

    IllegalStateException malformed(String what) {
      return new IllegalStateException("a cached column of " + buffer.length
          + " bytes that does not hold " + what + "; set spark.gpusort.intake.cacheBatches=false");
    }
  }

  /** Columns of this process decoded from scheme 0 (as they are), 1 (runs), 2 (dictionary). */
  static long columnsDecoded(int scheme) {
    return DECODED[scheme].sum();
  }
}
