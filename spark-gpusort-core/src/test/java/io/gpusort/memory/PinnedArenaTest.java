package io.gpusort.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The page-locked arena, on plain memory posing as page-locked: pinned in the background chunk by
 * chunk, never waited for, pieces that never overlap nor cross a chunk, freed ranges merged, the
 * memory given back to the arena and not to the allocator, and acquireTransferable falling back
 * to plain memory once the arena is full.
 */
class PinnedArenaTest {
  private static final long SEED = Long.getLong("gpusort.test.seed", 35L);
  private static final long CHUNK = 1L << 20;

  /** Plain memory that says it is page-locked, counting its calls; may block or fail. */
  static final class FakePinned implements NativeAllocator {
    final AtomicInteger allocations = new AtomicInteger();
    final AtomicInteger frees = new AtomicInteger();
    volatile CountDownLatch gate;
    volatile int failAfter = Integer.MAX_VALUE;
    /** How long each allocation takes, as page-locking a chunk does. */
    volatile long delayMillis;
    /** What {@link #holdsMemoryMap} says. */
    volatile boolean holdsMap;
    /** Allocations under way now, and the most at once. */
    final AtomicInteger running = new AtomicInteger();
    final AtomicInteger mostAtOnce = new AtomicInteger();
    private final java.util.Map<Long, Long> raws = new java.util.concurrent.ConcurrentHashMap<>();

    @Override
    public long allocate(long sizeBytes) {
      CountDownLatch g = gate;
      if (g != null) {
        try {
          g.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      mostAtOnce.accumulateAndGet(running.incrementAndGet(), Math::max);
      if (delayMillis > 0) {
        try {
          Thread.sleep(delayMillis);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      running.decrementAndGet();
      if (allocations.get() >= failAfter) {
        throw new IllegalStateException("cuMemHostAlloc: out of memory (planted)");
      }
      allocations.incrementAndGet();
      // Page-aligned, as the driver's page-locked memory is.
      long raw = NativeAllocator.UNSAFE.allocate(sizeBytes + PinnedArena.ALIGN_BYTES);
      long aligned = (raw + PinnedArena.ALIGN_BYTES) & -PinnedArena.ALIGN_BYTES;
      raws.put(aligned, raw);
      return aligned;
    }

    @Override
    public void free(long address, long sizeBytes) {
      frees.incrementAndGet();
      NativeAllocator.UNSAFE.free(raws.remove(address), sizeBytes);
    }

    @Override
    public boolean pinned() {
      return true;
    }

    @Override
    public boolean holdsMemoryMap() {
      return holdsMap;
    }
  }

  private static PinnedArena started(FakePinned allocator, long target, int threads)
      throws InterruptedException {
    PinnedArena arena = new PinnedArena(allocator, target, CHUNK);
    arena.start(threads);
    assertTrue(arena.awaitReady(10_000), "the arena was not pinned in time");
    return arena;
  }

  @Test
  void piecesComeFromPinnedChunksAndGoBackToTheArena() throws InterruptedException {
    FakePinned allocator = new FakePinned();
    long before = HostMemory.bytesInUse();
    try (PinnedArena arena = started(allocator, 4 * CHUNK, 2)) {
      assertEquals(4, allocator.allocations.get(), "four chunks of 1 MiB");
      assertEquals(before, HostMemory.bytesInUse(), "idle arena memory is not in use");
      long a = arena.tryAllocate(100_000);
      assertNotEquals(0, a);
      assertTrue(arena.owns(a));
      assertEquals(before + PinnedArena.align(100_000), HostMemory.bytesInUse());
      arena.release(a, 100_000);
      assertEquals(before, HostMemory.bytesInUse());
      assertEquals(0, allocator.frees.get(), "released pieces stay pinned in the arena");
      assertEquals(0, arena.stats().inUseBytes());
      assertEquals(CHUNK, arena.stats().largestFreeBytes(), "the freed piece merged back");
    }
    assertEquals(4, allocator.frees.get(), "closing frees every chunk");
    assertEquals(before, HostMemory.bytesInUse());
  }

  /**
   * Random pieces taken and given back: none overlaps another (each is filled with its own
   * pattern, checked before it goes back), none crosses a chunk, and once all are back every
   * chunk is one free range again.
   */
  @Test
  void randomPiecesNeverOverlapNorCrossAChunk() throws InterruptedException {
    SplittableRandom random = new SplittableRandom(SEED);
    FakePinned allocator = new FakePinned();
    try (PinnedArena arena = started(allocator, 8 * CHUNK, 3)) {
      List<long[]> held = new ArrayList<>();
      for (int step = 0; step < 20_000; step++) {
        if (held.isEmpty() || random.nextInt(100) < 55) {
          long size = 1 + random.nextLong(random.nextBoolean() ? 8192 : CHUNK / 2);
          long address = arena.tryAllocate(size);
          if (address == 0) {
            assertTrue(arena.stats().largestFreeBytes() < PinnedArena.align(size),
                "refused although a range was free, seed " + SEED);
            continue;
          }
          assertEquals(0, address % PinnedArena.ALIGN_BYTES, "seed " + SEED);
          assertTrue(arena.owns(address) && arena.owns(address + size - 1),
              "a piece crosses a chunk, seed " + SEED);
          long tag = random.nextLong();
          // Both ends of the piece: a neighbour overlapping either end overwrites a tag.
          HostMemory.putLong(address, tag);
          HostMemory.putLong(address + PinnedArena.align(size) - 8, ~tag);
          held.add(new long[] {address, size, tag});
        } else {
          long[] piece = held.remove(random.nextInt(held.size()));
          assertEquals(piece[2], HostMemory.getLong(piece[0]), "a piece was overwritten, seed "
              + SEED);
          assertEquals(~piece[2], HostMemory.getLong(piece[0] + PinnedArena.align(piece[1]) - 8),
              "a piece's end was overwritten, seed " + SEED);
          arena.release(piece[0], piece[1]);
        }
      }
      for (long[] piece : held) {
        assertEquals(piece[2], HostMemory.getLong(piece[0]), "seed " + SEED);
        arena.release(piece[0], piece[1]);
      }
      PinnedArena.Stats stats = arena.stats();
      assertEquals(0, stats.inUseBytes());
      assertEquals(CHUNK, stats.largestFreeBytes(), "free ranges did not merge back");
      assertTrue(stats.peakInUseBytes() > 4 * CHUNK, "the test did not fill the arena: "
          + stats.peakInUseBytes());
      // Eight whole chunks free again: eight pieces of a whole chunk fit, a ninth does not.
      List<Long> whole = new ArrayList<>();
      for (int i = 0; i < 8; i++) {
        long address = arena.tryAllocate(CHUNK);
        assertNotEquals(0, address, "chunk " + i);
        whole.add(address);
      }
      assertEquals(0, arena.tryAllocate(1));
      for (long address : whole) {
        arena.release(address, CHUNK);
      }
    }
  }

  @Test
  void aPieceLargerThanAChunkIsRefused() throws InterruptedException {
    try (PinnedArena arena = started(new FakePinned(), 4 * CHUNK, 1)) {
      assertEquals(0, arena.tryAllocate(CHUNK + 1));
      assertEquals(1, arena.stats().refusedPieces());
      assertEquals(CHUNK + PinnedArena.ALIGN_BYTES, arena.stats().refusedBytes());
    }
  }

  /** While the background threads are still pinning, a request is refused at once, not held. */
  @Test
  void requestsNeverWaitForPinning() throws InterruptedException {
    FakePinned allocator = new FakePinned();
    allocator.gate = new CountDownLatch(1);
    try (PinnedArena arena = new PinnedArena(allocator, 2 * CHUNK, CHUNK)) {
      arena.start(1);
      assertEquals(0, arena.tryAllocate(4096), "nothing is pinned yet");
      assertEquals(0, arena.readyBytes());
      assertFalse(arena.awaitReady(50));
      allocator.gate.countDown();
      assertTrue(arena.awaitReady(10_000));
      long address = arena.tryAllocate(4096);
      assertNotEquals(0, address);
      arena.release(address, 4096);
    }
  }

  /**
   * While sorts run (the arena's busy condition), pinning waits before its next chunk: the chunk
   * being pinned when they began completes, no other starts; once they end, the rest is pinned.
   */
  @Test
  void pinningWaitsWhileSortsRun() throws InterruptedException {
    FakePinned allocator = new FakePinned();
    AtomicBoolean sorting = new AtomicBoolean(true);
    try (PinnedArena arena = new PinnedArena(allocator, 4 * CHUNK, CHUNK)) {
      arena.pauseWhile(sorting::get);
      arena.start(2);
      assertFalse(arena.awaitReady(200), "pinned while sorts ran");
      assertEquals(0, allocator.allocations.get(), "a chunk pinned while sorts ran");
      assertEquals(0, arena.tryAllocate(4096), "nothing is pinned yet: a request is refused");
      sorting.set(false);
      assertTrue(arena.awaitReady(10_000), "not pinned once the sorts ended");
      assertEquals(4, allocator.allocations.get());
      // The thread that pinned the chunks counted its wait before pinning; the other may still
      // be sleeping out its last poll.
      assertTrue(arena.pausedNanos() >= 150_000_000L,
          "no thread counted its wait of about 200 ms: " + arena.pausedNanos());
    }
  }

  /**
   * While a piece of the arena is in use (a sort on the device, whether or not the busy condition
   * knows of it), pinning waits before its next chunk; once every piece is back, it goes on.
   */
  @Test
  void pinningWaitsWhilePiecesAreInUse() throws InterruptedException {
    FakePinned allocator = new FakePinned();
    AtomicBoolean hold = new AtomicBoolean(true);
    try (PinnedArena arena = new PinnedArena(allocator, 4 * CHUNK, CHUNK)) {
      // Only the first chunk is pinned until a piece of it is taken.
      arena.pauseWhile(() -> hold.get() && arena.readyBytes() >= CHUNK);
      arena.start(1);
      assertTrue(waitFor(() -> arena.readyBytes() >= CHUNK), "the first chunk was not pinned");
      long piece = arena.tryAllocate(4096);
      assertTrue(piece != 0, "the pinned chunk refused a piece");
      // The pause condition no longer holds; the piece in use alone holds the pinning back.
      hold.set(false);
      assertFalse(arena.awaitReady(200), "pinned while a piece was in use");
      assertEquals(1, allocator.allocations.get(), "a chunk pinned while a piece was in use");
      arena.release(piece, 4096);
      assertTrue(arena.awaitReady(10_000), "not pinned once the piece was back");
      assertEquals(4, allocator.allocations.get());
    }
  }

  /** Starts {@code arena} with {@code threads} and returns the milliseconds until it is whole. */
  private static long millisToPin(PinnedArena arena, int threads) throws InterruptedException {
    long start = System.nanoTime();
    arena.start(threads);
    assertTrue(arena.awaitReady(10_000), "the arena was not pinned in time");
    return (System.nanoTime() - start) / 1_000_000;
  }

  private static boolean waitFor(java.util.function.BooleanSupplier condition)
      throws InterruptedException {
    long deadline = System.nanoTime() + 10_000_000_000L;
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        return false;
      }
      Thread.sleep(5);
    }
    return true;
  }

  /** Closing an arena whose pinning waits for sorts to end stops the waiting threads. */
  @Test
  void closingEndsAPausedPinning() throws InterruptedException {
    FakePinned allocator = new FakePinned();
    PinnedArena arena = new PinnedArena(allocator, 4 * CHUNK, CHUNK);
    arena.pauseWhile(() -> true);
    arena.start(1);
    Thread.sleep(50);
    // The report says that pinning waits and for what
    String state = arena.pinningState();
    assertTrue(state.startsWith("1 pinning threads alive; process busy now: yes"), state);
    assertTrue(state.endsWith("stopped: no"), state);
    // close() joins the pinning threads: it returns only if the paused one ended.
    assertTimeoutPreemptively(java.time.Duration.ofSeconds(10), arena::close);
    assertEquals(0, allocator.allocations.get(), "a chunk pinned while sorts ran");
    assertEquals(0, arena.readyBytes());
    assertTrue(arena.pinningState().startsWith("0 pinning threads alive"),
        arena.pinningState());
  }

  /**
   * A process that is never idle still gets its whole arena: one thread pins beside its tasks at
   * the busy share, resting after each chunk so that pinning takes at most that share of its time
   * (3 chunks of 20 ms at a half: at least 3 * 20 + 2 * 20 ms), while the other thread waits.
   */
  @Test
  void aBusyProcessGetsItsArenaAtTheBusyShare() throws InterruptedException {
    FakePinned allocator = new FakePinned();
    allocator.delayMillis = 20;
    try (PinnedArena arena = new PinnedArena(allocator, 3 * CHUNK, CHUNK)) {
      arena.pauseWhile(() -> true);
      arena.pinWhileBusy(0.5);
      long millis = millisToPin(arena, 2);
      assertTrue(millis >= 95, "3 chunks at a busy share of 0.5 pinned in " + millis + " ms");
      assertEquals(3, allocator.allocations.get());
      assertEquals(1, allocator.mostAtOnce.get(), "more than one thread pinned beside tasks");
      assertEquals(3 * CHUNK, arena.busyPinnedBytes());
      assertTrue(arena.pinningState().contains("pinned while busy 0.00 GiB (share 0.5)"),
          arena.pinningState());
    }
  }

  /**
   * Where the allocator holds the process's memory map (the driver's own page-locking), nothing is
   * pinned beside tasks whatever the busy share: every thread of the process would wait for it.
   */
  @Test
  void anAllocatorHoldingTheMemoryMapWaitsForAnIdleProcess() throws InterruptedException {
    FakePinned allocator = new FakePinned();
    allocator.holdsMap = true;
    AtomicBoolean tasks = new AtomicBoolean(true);
    try (PinnedArena arena = new PinnedArena(allocator, 2 * CHUNK, CHUNK)) {
      arena.pauseWhile(tasks::get);
      arena.pinWhileBusy(1);
      arena.start(2);
      assertFalse(arena.awaitReady(200), "pinned beside tasks by an allocator holding the map");
      assertEquals(0, allocator.allocations.get());
      assertTrue(arena.pinningState().contains("share 0, the allocator holds the memory map"),
          arena.pinningState());
      tasks.set(false);
      assertTrue(arena.awaitReady(10_000), "not pinned once the process was idle");
      assertEquals(0, arena.busyPinnedBytes());
    }
  }

  @Test
  void aBusyShareOutsideZeroToOneIsRefused() {
    try (PinnedArena arena = new PinnedArena(new FakePinned(), CHUNK, CHUNK)) {
      org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
          () -> arena.pinWhileBusy(1.5));
      org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
          () -> arena.pinWhileBusy(-0.1));
    }
  }

  /**
   * A paced pinning rests after each chunk for its multiple of the chunk's time, so that the
   * process's other threads get the memory map between chunks: 3 chunks of 20 ms each with a rest
   * of 3 times that take at least 3 * 20 + 2 * 60 ms (without rests, 60 ms).
   */
  @Test
  void aPacedPinningRestsBetweenChunks() throws InterruptedException {
    FakePinned allocator = new FakePinned();
    allocator.delayMillis = 20;
    try (PinnedArena arena = new PinnedArena(allocator, 3 * CHUNK, CHUNK)) {
      arena.pace(3);
      long millis = millisToPin(arena, 1);
      assertTrue(millis >= 175, "3 chunks with rests pinned in " + millis + " ms");
      assertEquals(3, allocator.allocations.get());
    }
  }

  /** Closing an arena whose pinning rests between chunks ends the rest and frees every chunk. */
  @Test
  void closingEndsARest() throws InterruptedException {
    FakePinned allocator = new FakePinned();
    allocator.delayMillis = 10;
    PinnedArena arena = new PinnedArena(allocator, 4 * CHUNK, CHUNK);
    // A rest of about 10 s after the first chunk.
    arena.pace(1000);
    arena.start(1);
    assertTrue(waitFor(() -> arena.readyBytes() >= CHUNK), "the first chunk was not pinned");
    assertTimeoutPreemptively(java.time.Duration.ofSeconds(5), arena::close);
    assertEquals(1, allocator.allocations.get(), "a chunk pinned during the rest");
    assertEquals(allocator.allocations.get(), allocator.frees.get(), "a chunk not freed");
  }

  @Test
  void aNegativeRestIsRefused() {
    try (PinnedArena arena = new PinnedArena(new FakePinned(), CHUNK, CHUNK)) {
      org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
          () -> arena.pace(-1));
    }
  }

  /** The OS refusing more page-locked memory stops the growth where it is; what was pinned serves. */
  @Test
  void aRefusedChunkStopsTheGrowth() throws InterruptedException {
    FakePinned allocator = new FakePinned();
    allocator.failAfter = 2;
    try (PinnedArena arena = new PinnedArena(allocator, 8 * CHUNK, CHUNK)) {
      arena.start(1);
      assertFalse(arena.awaitReady(10_000), "pinning cannot complete");
      assertNotNull(arena.pinFailure());
      assertEquals(2 * CHUNK, arena.readyBytes());
      long address = arena.tryAllocate(CHUNK);
      assertNotEquals(0, address);
      arena.release(address, CHUNK);
    }
  }

  @Test
  void anEmptyArenaPinsNothing() throws InterruptedException {
    FakePinned allocator = new FakePinned();
    try (PinnedArena arena = new PinnedArena(allocator, 0, CHUNK)) {
      arena.start(2);
      assertFalse(arena.awaitReady(0) && arena.targetBytes() > 0);
      assertEquals(0, arena.tryAllocate(1));
      assertNull(arena.pinFailure());
    }
    assertEquals(0, allocator.allocations.get());
  }

  /**
   * The process's transferable buffers: from the arena while it has room (page-locked), then from
   * plain memory, never waiting; each goes back where it came from.
   */
  @Test
  void transferableBuffersFallBackToPlainMemoryWhenTheArenaIsFull() throws InterruptedException {
    FakePinned allocator = new FakePinned();
    PinnedArena arena = started(allocator, 2 * CHUNK, 1);
    PinnedArena before = ProcessArena.replace(arena);
    long bytesBefore = HostMemory.bytesInUse();
    try {
      List<HostBuffer> buffers = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        buffers.add(HostBuffer.acquireTransferable(CHUNK / 2));
      }
      HostBuffer plain = HostBuffer.acquireTransferable(CHUNK / 2);
      assertTrue(buffers.stream().allMatch(HostBuffer::isPinned), "the arena serves first");
      assertFalse(plain.isPinned(), "a full arena: plain memory");
      assertFalse(arena.owns(plain.address()));
      assertEquals(2 * CHUNK, HostBuffer.arenaStats().inUseBytes());
      assertTrue(HostBuffer.arenaStats().refusedPieces() >= 1);
      plain.close();
      for (HostBuffer b : buffers) {
        b.close();
        b.close();
      }
      assertEquals(0, arena.stats().inUseBytes());
      assertEquals(bytesBefore, HostMemory.bytesInUse());
      assertTrue(HostBuffer.acquireNanos() > 0);
    } finally {
      ProcessArena.replace(before);
      arena.close();
    }
  }
}
