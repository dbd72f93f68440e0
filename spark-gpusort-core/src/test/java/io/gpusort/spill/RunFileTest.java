package io.gpusort.spill;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpusort.memory.HostBuffer;
import io.gpusort.memory.HostMemory;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The spilled-run format: what {@link RunWriter} writes, {@link RunReader} reads back record for
 * record, from heap or off-heap rows, with rows smaller and larger than the write buffer; a
 * truncated run is an error, not a short read.
 */
class RunFileTest {
  @ParameterizedTest(name = "numWords={0}")
  @ValueSource(ints = {1, 2, 5, 33})
  void recordsComeBackExactly(int numWords) throws IOException {
    long seed = 0x5EED + numWords;
    SplittableRandom random = new SplittableRandom(seed);
    List<long[]> keys = new ArrayList<>();
    List<byte[]> rows = new ArrayList<>();
    for (int i = 0; i < 700; i++) {
      long[] key = new long[numWords];
      for (int w = 0; w < numWords; w++) {
        key[w] = random.nextLong();
      }
      int size = switch (i % 7) {
        case 0 -> 0;
        case 1 -> 8 * random.nextInt(1, 20_000);
        case 2 -> RunWriter.BUFFER_BYTES + 8;
        default -> 8 * random.nextInt(1, 40);
      };
      byte[] row = new byte[size];
      random.nextBytes(row);
      keys.add(key);
      rows.add(row);
    }
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (RunWriter writer = new RunWriter(bytes, numWords);
        HostBuffer offHeap = HostBuffer.allocate(8L * 20_000 + RunWriter.BUFFER_BYTES)) {
      for (int i = 0; i < rows.size(); i++) {
        byte[] row = rows.get(i);
        if (i % 2 == 0) {
          writer.write(keys.get(i), row, HostMemory.BYTE_ARRAY_OFFSET, row.length);
        } else {
          HostMemory.copy(row, HostMemory.BYTE_ARRAY_OFFSET, null, offHeap.address(), row.length);
          writer.write(keys.get(i), null, offHeap.address(), row.length);
        }
      }
      assertEquals(rows.size(), writer.numRecords());
    }
    try (RunReader reader = new RunReader(new ByteArrayInputStream(bytes.toByteArray()),
        numWords, rows.size())) {
      for (int i = 0; i < rows.size(); i++) {
        String where = "seed=" + seed + " record " + i;
        assertTrue(reader.next(), where);
        assertArrayEquals(keys.get(i), reader.key(), where);
        assertEquals(keys.get(i)[numWords - 1], reader.keyWord(numWords - 1), where);
        assertEquals(rows.get(i).length, reader.rowSize(), where);
        assertArrayEquals(rows.get(i), Arrays.copyOf(reader.rowBytes(), reader.rowSize()), where);
      }
      assertFalse(reader.next(), "no records after the count");
    }
  }

  @ParameterizedTest(name = "cut at {0} bytes from the end")
  @ValueSource(ints = {1, 8, 100})
  void truncatedRunIsAnError(int cut) throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    byte[] row = new byte[64];
    try (RunWriter writer = new RunWriter(bytes, 1)) {
      for (int i = 0; i < 10; i++) {
        writer.write(new long[] {i}, row, HostMemory.BYTE_ARRAY_OFFSET, row.length);
      }
    }
    byte[] all = bytes.toByteArray();
    byte[] truncated = Arrays.copyOf(all, all.length - cut);
    try (RunReader reader = new RunReader(new ByteArrayInputStream(truncated), 1, 10)) {
      assertThrows(EOFException.class, () -> {
        while (reader.next()) {
          // read to the end
        }
      });
    }
  }
}
