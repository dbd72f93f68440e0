package io.gpusort.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Pooled buffers: reused after close, counted as in use only while held, idle bytes capped by a
 * limit that pools share, and given back once a pool is left unused for the idle timeout.
 */
class HostBufferPoolTest {
  private static HostBufferPool pool(long maxIdleBytes) {
    return new HostBufferPool(NativeAllocator.UNSAFE, new IdleLimit(maxIdleBytes, 60_000));
  }

  @Test
  void closedBufferIsReusedAndNotCountedAsInUse() {
    HostBufferPool pool = pool(1L << 30);
    long before = HostMemory.bytesInUse();
    long address;
    try (HostBuffer buffer = pool.acquire(100_000)) {
      assertEquals(114_688, buffer.sizeBytes(), "100,000 bytes round up to 1.75 x 64 KiB");
      assertEquals(before + buffer.sizeBytes(), HostMemory.bytesInUse());
      buffer.putLong(buffer.sizeBytes() - 8, 42L);
      address = buffer.address();
    }
    assertEquals(before, HostMemory.bytesInUse(), "an idle pooled block is not in use");
    assertEquals(114_688, pool.idleBytes());
    try (HostBuffer again = pool.acquire(110_000)) {
      assertEquals(address, again.address(), "same size class: the idle block comes back");
      assertEquals(0, pool.idleBytes());
    }
    pool.trim();
    assertEquals(0, pool.idleBytes());
    assertEquals(before, HostMemory.bytesInUse());
  }

  @Test
  void sizeClassesWasteAtMostAQuarter() {
    assertEquals(64 << 10, HostBufferPool.sizeClass(1));
    assertEquals(64 << 10, HostBufferPool.sizeClass(64 << 10));
    assertEquals(80 << 10, HostBufferPool.sizeClass((64 << 10) + 1));
    assertEquals(1L << 30, HostBufferPool.sizeClass(1L << 30));
    assertEquals(5L << 28, HostBufferPool.sizeClass((1L << 30) + 1));
    for (long size = 1; size < 1L << 40; size = size * 3 + 7) {
      long cls = HostBufferPool.sizeClass(size);
      assertTrue(cls >= size, size + " -> " + cls);
      assertTrue(size < 64 << 10 || cls <= size + size / 4 + 1, size + " -> " + cls);
      assertEquals(cls, HostBufferPool.sizeClass(cls), "a class size is its own class");
    }
  }

  @Test
  void idleBytesStayUnderTheCapSharedByPools() {
    IdleLimit limit = new IdleLimit(100_000, 60_000);
    HostBufferPool one = new HostBufferPool(NativeAllocator.UNSAFE, limit);
    HostBufferPool two = new HostBufferPool(NativeAllocator.UNSAFE, limit);
    long before = HostMemory.bytesInUse();
    HostBuffer a = one.acquire(64 << 10);
    HostBuffer b = two.acquire(64 << 10);
    a.close();
    b.close();
    assertEquals(64 << 10, one.idleBytes(), "the first block fits the cap");
    assertEquals(0, two.idleBytes(), "the second would pass the cap the pools share: freed");
    assertEquals(64 << 10, limit.idleBytes());
    one.trim();
    assertEquals(0, limit.idleBytes());
    assertEquals(before, HostMemory.bytesInUse());
  }

  @Test
  void unusedPoolGivesItsIdleMemoryBack() {
    IdleLimit limit = new IdleLimit(1L << 30, 1000);
    HostBufferPool pool = new HostBufferPool(NativeAllocator.UNSAFE, limit);
    pool.acquire(1 << 20).close();
    long now = System.currentTimeMillis();
    pool.trimIfUnusedSince(now);
    assertEquals(1 << 20, pool.idleBytes(), "used just now: kept");
    pool.trimIfUnusedSince(now + 1000);
    assertEquals(0, pool.idleBytes(), "unused for the timeout: freed");
    assertEquals(0, limit.idleBytes());
  }

  @Test
  void processPoolsHonourTheConfiguredBound() throws InterruptedException {
    long maxBefore = HostBuffer.poolMaxIdleBytes();
    try {
      HostBuffer.configurePools(1 << 20, 200);
      HostBuffer.acquire(512 << 10).close();
      HostBuffer.acquire(768 << 10).close();
      assertTrue(HostBuffer.pooledIdleBytes() <= 1 << 20,
          "idle " + HostBuffer.pooledIdleBytes() + " over the 1 MiB bound");
      assertTrue(HostBuffer.pooledIdleBytes() > 0, "the first buffer is kept for reuse");
      long deadline = System.currentTimeMillis() + 5000;
      while (HostBuffer.pooledIdleBytes() > 0 && System.currentTimeMillis() < deadline) {
        Thread.sleep(20);
      }
      assertEquals(0, HostBuffer.pooledIdleBytes(), "given back after the 200 ms idle timeout");
      HostBuffer.acquire(512 << 10).close();
      HostBuffer.configurePools(0, 200);
      assertEquals(0, HostBuffer.pooledIdleBytes(), "lowering the bound frees idle memory now");
    } finally {
      HostBuffer.configurePools(maxBefore, 30_000);
    }
  }

  @Test
  void closeIsIdempotentAndAClosedBufferRefusesAccess() {
    HostBufferPool pool = pool(1L << 20);
    HostBuffer buffer = pool.acquire(8);
    buffer.close();
    buffer.close();
    assertEquals(64 << 10, pool.idleBytes(), "returned once");
    assertThrows(IllegalStateException.class, buffer::address);
    pool.trim();
  }
  /**
   * A block being allocated (pinning can take seconds) does not hold up the pool: meanwhile
   * another task takes an idle block of another size and gives back its own.
   */
  @Test
  void aSlowAllocationDoesNotBlockThePool() throws Exception {
    CountDownLatch allocating = new CountDownLatch(1);
    CountDownLatch proceed = new CountDownLatch(1);
    NativeAllocator slow = new NativeAllocator() {
      @Override
      public long allocate(long sizeBytes) {
        if (sizeBytes >= 1 << 20) {
          allocating.countDown();
          try {
            proceed.await();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        }
        return NativeAllocator.UNSAFE.allocate(sizeBytes);
      }

      @Override
      public void free(long address, long sizeBytes) {
        NativeAllocator.UNSAFE.free(address, sizeBytes);
      }

      @Override
      public boolean pinned() {
        return false;
      }
    };
    HostBufferPool pool = new HostBufferPool(slow, new IdleLimit(1L << 30, 60_000));
    pool.acquire(100_000).close();
    FutureTask<HostBuffer> big =
        new FutureTask<>(() -> pool.acquire(1 << 20));
    Thread thread = new Thread(big, "slow allocation");
    thread.start();
    try {
      assertTrue(allocating.await(10, TimeUnit.SECONDS));
      FutureTask<Boolean> small = new FutureTask<>(() -> {
        try (HostBuffer buffer = pool.acquire(100_000)) {
          return buffer.sizeBytes() == 114_688;
        }
      });
      new Thread(small, "idle block").start();
      assertTrue(small.get(10, TimeUnit.SECONDS),
          "an idle block is taken and given back while another is being allocated");
    } finally {
      proceed.countDown();
    }
    big.get(10, TimeUnit.SECONDS).close();
    pool.trim();
    assertEquals(0, pool.idleBytes());
  }
}
