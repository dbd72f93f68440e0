package io.gpusort.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** Pooled buffers: reused after close, counted as in use only while held, idle bytes capped. */
class HostBufferPoolTest {
  @Test
  void closedBufferIsReusedAndNotCountedAsInUse() {
    HostBufferPool pool = new HostBufferPool(1L << 30);
    long before = HostMemory.bytesInUse();
    long address;
    try (HostBuffer buffer = pool.acquire(100_000)) {
      assertTrue(buffer.sizeBytes() >= 100_000, "size " + buffer.sizeBytes());
      assertEquals(before + buffer.sizeBytes(), HostMemory.bytesInUse());
      buffer.putLong(buffer.sizeBytes() - 8, 42L);
      address = buffer.address();
    }
    assertEquals(before, HostMemory.bytesInUse(), "an idle pooled block is not in use");
    assertEquals(131_072, pool.idleBytes(), "100,000 bytes round up to the 128 KiB class");
    try (HostBuffer again = pool.acquire(120_000)) {
      assertEquals(address, again.address(), "same size class: the idle block comes back");
      assertEquals(0, pool.idleBytes());
    }
    pool.trim();
    assertEquals(0, pool.idleBytes());
    assertEquals(before, HostMemory.bytesInUse());
  }

  @Test
  void idleBytesStayUnderTheCap() {
    HostBufferPool pool = new HostBufferPool(100_000);
    long before = HostMemory.bytesInUse();
    HostBuffer a = pool.acquire(64 << 10);
    HostBuffer b = pool.acquire(64 << 10);
    a.close();
    b.close();
    assertEquals(64 << 10, pool.idleBytes(), "the second block would pass the cap: freed");
    pool.trim();
    assertEquals(before, HostMemory.bytesInUse());
  }

  @Test
  void closeIsIdempotentAndAClosedBufferRefusesAccess() {
    HostBufferPool pool = new HostBufferPool(1L << 20);
    HostBuffer buffer = pool.acquire(8);
    buffer.close();
    buffer.close();
    assertEquals(64 << 10, pool.idleBytes(), "returned once");
    assertThrows(IllegalStateException.class, buffer::address);
    pool.trim();
  }
}
