package io.gpusort.sql;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpusort.TestSeeds;
import io.gpusort.engine.RowPages;
import io.gpusort.memory.HostBuffer;
import io.gpusort.memory.HostMemory;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.apache.spark.SparkConf;
import org.apache.spark.memory.TaskMemoryManager;
import org.apache.spark.memory.UnifiedMemoryManager;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.execution.vectorized.ConstantColumnVector;
import org.apache.spark.sql.execution.vectorized.Dictionary;
import org.apache.spark.sql.execution.vectorized.OffHeapColumnVector;
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector;
import org.apache.spark.sql.execution.vectorized.WritableColumnVector;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.unsafe.types.UTF8String;
import org.junit.jupiter.api.Test;

/**
 * {@link ColumnarRowWriter} against Spark's {@code UnsafeProjection}: random batches of every
 * column type it writes (nulls, empty and multi-byte strings, strings longer than a page, decimals
 * compact and wide, more than 64 fields), in vectors on and off the heap, dictionary-encoded and
 * constant, written through a {@link RowStore} of small pages in random slices; every row must be
 * the projection's bytes exactly, and the store's records must add up.
 *
 * <p>Seeded from {@code gpusort.test.seed} when set, randomly otherwise; failures name the seed.
 */
class ColumnarRowWriterTest {
  private static final long SEED = TestSeeds.baseSeed();
  private static final int CASES = 300;
  private static final int[] SIZES = {0, 1, 2, 63, 64, 65, 127, 128, 129, 1000, 4097};
  private static final long[] PAGE_BYTES = {64, 200, 1024, 4096, 1 << 20};
  private static final String[] MULTI_BYTE = {"é", "ß", "漢", "字", "😀", "a", " "};

  private static final DataType[] TYPES = {
      DataTypes.BooleanType, DataTypes.ByteType, DataTypes.ShortType, DataTypes.IntegerType,
      DataTypes.LongType, DataTypes.FloatType, DataTypes.DoubleType, DataTypes.DateType,
      DataTypes.TimestampType, DataTypes.TimestampNTZType, DataTypes.createDecimalType(10, 2),
      DataTypes.createDecimalType(18, 0), DataTypes.createDecimalType(5, 5),
      DataTypes.createDecimalType(30, 5), DataTypes.createDecimalType(38, 0),
      DataTypes.createDecimalType(19, 19), DataTypes.StringType, DataTypes.BinaryType};

  /** How a column's vector holds its values. */
  private enum Holding { ON_HEAP, OFF_HEAP, DICTIONARY, CONSTANT }

  @Test
  void rowsAreTheProjectionsBytes() {
    SplittableRandom seeds = new SplittableRandom(SEED);
    for (int c = 0; c < CASES; c++) {
      long seed = seeds.nextLong();
      checkCase(new SplittableRandom(seed), "case " + c + TestSeeds.rerunHint(SEED));
    }
  }

  @Test
  void typesItDoesNotWriteAreLeftToRows() {
    List<DataType> unwritten = new ArrayList<>(List.of(
        DataTypes.createArrayType(DataTypes.IntegerType),
        DataTypes.createMapType(DataTypes.StringType, DataTypes.IntegerType),
        new StructType().add("a", DataTypes.IntegerType), DataTypes.CalendarIntervalType,
        DataTypes.NullType));
    unwritten.addAll(LineFeatures.newerTypes());
    for (DataType type : unwritten) {
      StructType schema = new StructType().add("s", DataTypes.StringType).add("x", type);
      assertNull(ColumnarRowWriter.of(schema), type.simpleString());
    }
    for (DataType type : TYPES) {
      assertNotNull(ColumnarRowWriter.of(new StructType().add("x", type)), type.simpleString());
    }
  }

  /** One random schema, one to three random batches, all into one store of small pages. */
  private static void checkCase(SplittableRandom random, String where) {
    int numFields = random.nextInt(8) == 0 ? 60 + random.nextInt(12) : 1 + random.nextInt(6);
    StructType schema = new StructType();
    for (int i = 0; i < numFields; i++) {
      schema = schema.add("c" + i, TYPES[random.nextInt(TYPES.length)]);
    }
    long pageBytes = PAGE_BYTES[random.nextInt(PAGE_BYTES.length)];
    String what = where + ", " + schema.simpleString() + ", pages of " + pageBytes;
    ColumnarRowWriter writer = ColumnarRowWriter.of(schema);
    assertNotNull(writer, what);
    UnsafeProjection projection = UnsafeProjection.create(schema);
    TaskMemoryManager taskMemory = new TaskMemoryManager(
        new UnifiedMemoryManager(new SparkConf(), 1L << 30, 1L << 29, 1), 0);
    long hostBytesBefore = HostMemory.bytesInUse();
    RowStore store = new RowStore(new SortMemory(taskMemory), pageBytes);
    try {
      List<byte[]> expected = new ArrayList<>();
      List<Long> pointers = new ArrayList<>();
      int batches = 1 + random.nextInt(3);
      for (int b = 0; b < batches; b++) {
        int n = random.nextInt(3) == 0 ? random.nextInt(300) : SIZES[random.nextInt(SIZES.length)];
        try (ColumnarBatch batch = randomBatch(schema, n, random)) {
          for (int r = 0; r < n; r++) {
            expected.add(projection.apply(batch.getRow(r)).getBytes().clone());
          }
          writer.bind(batch);
          for (int r = 0; r < n; r++) {
            assertEquals(expected.get(expected.size() - n + r).length, writer.rowBytes(r),
                what + ": size of row " + r + " of batch " + b);
          }
          appendInSlices(writer, store, n, random, pointers, what);
        }
      }
      long recordBytes = 0;
      for (int k = 0; k < expected.size(); k++) {
        long pointer = pointers.get(k);
        byte[] row = new byte[store.size(pointer)];
        HostMemory.copy(null, store.address(pointer), row, HostMemory.BYTE_ARRAY_OFFSET,
            row.length);
        assertArrayEquals(expected.get(k), row, what + ": row " + k);
        recordBytes += RowStore.recordBytes(row.length);
      }
      assertEquals(recordBytes, store.dataBytes(), what + ": bytes of records");
      checkPages(store, expected, pointers, what);
    } finally {
      store.freeAllBut(-1);
    }
    assertEquals(hostBytesBefore, HostMemory.bytesInUse(), what + ": native memory left");
    assertEquals(0, taskMemory.cleanUpAllAllocatedMemory(), what + ": task memory left");
  }

  /**
   * Rows of the bound batch into {@code store} as the intake takes them: room for the next row,
   * then a random part of the rows that fit its page. New pages are filled with garbage first.
   */
  private static void appendInSlices(ColumnarRowWriter writer, RowStore store, int n,
      SplittableRandom random, List<Long> pointers, String what) {
    for (int r = 0; r < n; ) {
      int pagesBefore = store.numPages();
      assertTrue(store.tryMakeRoom(writer.rowBytes(r)), what);
      if (store.numPages() > pagesBefore) {
        // Garbage where the rows go, so that a byte the writer leaves unwritten shows.
        HostBuffer page = store.page(store.numPages() - 1);
        HostMemory.fill(page.address(), page.sizeBytes(), (byte) 0xa5);
      }
      int room = store.roomFor(writer, r, n - r);
      assertTrue(room >= 1, what + ": no room after making room for row " + r);
      int take = random.nextBoolean() ? room : 1 + random.nextInt(room);
      long pointer = store.append(writer, r, take);
      for (int j = 0; j < take; j++) {
        pointers.add(pointer);
        pointer += RowStore.recordBytes(writer.rowBytes(r + j));
      }
      r += take;
    }
  }

  /** The pages as an engine reads them: their bytes add up, one record size when all share it. */
  private static void checkPages(RowStore store, List<byte[]> expected, List<Long> pointers,
      String what) {
    int n = expected.size();
    try (HostBuffer index = HostBuffer.acquire(8L * Math.max(1, n))) {
      for (int k = 0; k < n; k++) {
        HostMemory.putLong(index.address() + 8L * k, pointers.get(k));
      }
      RowPages pages = store.asPages(index, n);
      long sizes = expected.stream().mapToInt(row -> row.length).distinct().count();
      int fixed = sizes == 1 ? (int) RowStore.recordBytes(expected.get(0).length) : 0;
      assertEquals(n == 0 ? 0 : fixed, pages.fixedRecordBytes(), what + ": one record size");
    }
  }

  private static ColumnarBatch randomBatch(StructType schema, int n, SplittableRandom random) {
    StructField[] fields = schema.fields();
    ColumnVector[] vectors = new ColumnVector[fields.length];
    for (int i = 0; i < fields.length; i++) {
      vectors[i] = randomVector(fields[i].dataType(), n, random);
    }
    return new ColumnarBatch(vectors, n);
  }

  private static ColumnVector randomVector(DataType type, int n, SplittableRandom random) {
    double nullFraction = new double[] {0, 0, 0.05, 0.5, 1}[random.nextInt(5)];
    boolean bytes = type == DataTypes.StringType || type == DataTypes.BinaryType;
    Holding holding = Holding.values()[random.nextInt(bytes ? 4 : 2)];
    if (random.nextInt(10) == 0) {
      holding = Holding.CONSTANT;
    }
    if (holding == Holding.CONSTANT) {
      ConstantColumnVector v = new ConstantColumnVector(n, type);
      Object value = random.nextInt(4) == 0 ? null : randomValue(type, random);
      if (value == null) {
        v.setNull();
      } else {
        setConstant(v, type, value);
      }
      return v;
    }
    int capacity = Math.max(1, n);
    WritableColumnVector v = holding == Holding.OFF_HEAP
        ? new OffHeapColumnVector(capacity, type) : new OnHeapColumnVector(capacity, type);
    if (holding == Holding.DICTIONARY) {
      byte[][] words = new byte[1 + random.nextInt(8)][];
      for (int k = 0; k < words.length; k++) {
        Object value = randomValue(type, random);
        words[k] = value instanceof UTF8String s ? s.getBytes() : (byte[]) value;
      }
      WritableColumnVector ids = v.reserveDictionaryIds(capacity);
      for (int r = 0; r < n; r++) {
        ids.putInt(r, random.nextInt(words.length));
      }
      v.setDictionary(new BytesDictionary(words));
    }
    for (int r = 0; r < n; r++) {
      if (random.nextDouble() < nullFraction) {
        v.putNull(r);
      } else if (holding != Holding.DICTIONARY) {
        put(v, r, type, randomValue(type, random));
      }
    }
    return v;
  }

  /** A value of {@code type} as Spark holds it inside (UTF8String, Decimal, ...). */
  private static Object randomValue(DataType type, SplittableRandom random) {
    if (type == DataTypes.BooleanType) {
      return random.nextBoolean();
    } else if (type == DataTypes.ByteType) {
      return (byte) random.nextInt();
    } else if (type == DataTypes.ShortType) {
      return (short) random.nextInt();
    } else if (type == DataTypes.IntegerType || type == DataTypes.DateType) {
      return random.nextInt();
    } else if (type == DataTypes.LongType || type == DataTypes.TimestampType
        || type == DataTypes.TimestampNTZType) {
      return random.nextLong();
    } else if (type == DataTypes.FloatType) {
      float[] special = {Float.NaN, -0.0f, 0.0f, Float.NEGATIVE_INFINITY, Float.MAX_VALUE};
      return random.nextInt(4) == 0 ? special[random.nextInt(special.length)]
          : Float.intBitsToFloat(random.nextInt() & 0x7f7fffff) * (random.nextBoolean() ? 1 : -1);
    } else if (type == DataTypes.DoubleType) {
      double[] special = {Double.NaN, -0.0, 0.0, Double.POSITIVE_INFINITY, -Double.MIN_VALUE};
      return random.nextInt(4) == 0 ? special[random.nextInt(special.length)]
          : random.nextDouble() * 1e300 - 5e299;
    } else if (type instanceof DecimalType d) {
      BigInteger bound = BigInteger.TEN.pow(d.precision());
      BigInteger unscaled = new BigInteger(bound.bitLength() + 2, new java.util.Random(
          random.nextLong())).mod(bound);
      if (random.nextInt(8) == 0) {
        unscaled = bound.subtract(BigInteger.ONE);
      }
      BigDecimal value = new BigDecimal(random.nextBoolean() ? unscaled : unscaled.negate(),
          d.scale());
      return Decimal.apply(value, d.precision(), d.scale());
    } else if (type == DataTypes.StringType) {
      return UTF8String.fromString(randomText(random));
    } else if (type == DataTypes.BinaryType) {
      byte[] value = new byte[random.nextInt(4) == 0 ? random.nextInt(300) : random.nextInt(20)];
      for (int k = 0; k < value.length; k++) {
        value[k] = (byte) random.nextInt();
      }
      return value;
    }
    throw new IllegalArgumentException("no values of " + type);
  }

  /** Empty, short, multi-byte or long (past 64 bytes, some past a small page). */
  private static String randomText(SplittableRandom random) {
    int length = switch (random.nextInt(5)) {
      case 0 -> 0;
      case 1 -> 1 + random.nextInt(8);
      case 2 -> 65 + random.nextInt(300);
      default -> random.nextInt(40);
    };
    StringBuilder text = new StringBuilder();
    boolean multiByte = random.nextBoolean();
    for (int k = 0; k < length; k++) {
      text.append(multiByte ? MULTI_BYTE[random.nextInt(MULTI_BYTE.length)]
          : (char) ('a' + random.nextInt(26)));
    }
    return text.toString();
  }

  private static void put(WritableColumnVector v, int r, DataType type, Object value) {
    if (value instanceof Boolean b) {
      v.putBoolean(r, b);
    } else if (value instanceof Byte b) {
      v.putByte(r, b);
    } else if (value instanceof Short s) {
      v.putShort(r, s);
    } else if (value instanceof Integer i) {
      v.putInt(r, i);
    } else if (value instanceof Long l) {
      v.putLong(r, l);
    } else if (value instanceof Float f) {
      v.putFloat(r, f);
    } else if (value instanceof Double d) {
      v.putDouble(r, d);
    } else if (value instanceof Decimal d) {
      v.putDecimal(r, d, ((DecimalType) type).precision());
    } else if (value instanceof UTF8String s) {
      v.putByteArray(r, s.getBytes());
    } else {
      v.putByteArray(r, (byte[]) value);
    }
  }

  private static void setConstant(ConstantColumnVector v, DataType type, Object value) {
    if (value instanceof Boolean b) {
      v.setBoolean(b);
    } else if (value instanceof Byte b) {
      v.setByte(b);
    } else if (value instanceof Short s) {
      v.setShort(s);
    } else if (value instanceof Integer i) {
      v.setInt(i);
    } else if (value instanceof Long l) {
      v.setLong(l);
    } else if (value instanceof Float f) {
      v.setFloat(f);
    } else if (value instanceof Double d) {
      v.setDouble(d);
    } else if (value instanceof Decimal d) {
      v.setDecimal(d, ((DecimalType) type).precision());
    } else if (value instanceof UTF8String s) {
      v.setUtf8String(s);
    } else {
      v.setBinary((byte[]) value);
    }
  }

  /** A dictionary of strings or binaries, as a Parquet page may be encoded. */
  private record BytesDictionary(byte[][] words) implements Dictionary {
    @Override
    public byte[] decodeToBinary(int id) {
      return words[id];
    }

    @Override
    public int decodeToInt(int id) {
      throw new UnsupportedOperationException();
    }

    @Override
    public long decodeToLong(int id) {
      throw new UnsupportedOperationException();
    }

    @Override
    public float decodeToFloat(int id) {
      throw new UnsupportedOperationException();
    }

    @Override
    public double decodeToDouble(int id) {
      throw new UnsupportedOperationException();
    }
  }
}
