package io.gpusort.memory;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.NavigableSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Page-locked host memory of a fixed target size, page-locked once by background threads in
 * chunks and handed out in pieces to sorts, which give them back to the arena, never to the
 * operating system, while the process lives.
 *
 * <p>Pinning takes long (about 0.5 s a GiB with the driver's own allocation on the H200 host, 0.07
 * s with huge pages faulted in first on the H100, {@link PinMethod}), so it never happens on a
 * task's path: a request that the chunks pinned so far cannot serve is refused at once
 * ({@link #tryAllocate} returns 0) and the caller takes plain memory, which a GPU engine moves
 * through its few page-locked staging buffers. A piece never crosses a chunk: each chunk is one
 * registration with the driver, and a DMA must stay within one.
 *
 * <p>Pieces are best fit among the free ranges, in multiples of {@link #ALIGN_BYTES}, and freed
 * ranges merge with free neighbours of the same chunk, so that the pages of many tasks, which come
 * and go in many sizes, do not fragment the arena for long. Idle arena memory is not counted in
 * {@link HostMemory#bytesInUse()}; pieces handed out are, exactly as other buffers.
 */
public final class PinnedArena implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(PinnedArena.class);
  /** Pieces start and end on page boundaries. */
  public static final long ALIGN_BYTES = 4096;
  /**
   * The largest chunk pinned at once: also the largest piece the arena hands out (a sort's index
   * arrays up to about 3e7 rows; row pages are at most spark.gpusort.chunk.maxBytes). Small, since
   * a chunk under way is not stopped when a task starts: 256 MiB take about 0.13 s to pin on the
   * H200 host, the longest a task finds pinning beside it.
   */
  public static final long DEFAULT_CHUNK_BYTES = 256L << 20;
  /** How often a paused pinning thread looks again. */
  private static final long PAUSE_POLL_MILLIS = 20;

  private static final Comparator<Free> BY_SIZE =
      Comparator.comparingLong(Free::size).thenComparingLong(Free::address);

  private final NativeAllocator allocator;
  private final long targetBytes;
  private final long chunkBytes;
  /** Rest after each chunk, as a multiple of the time the chunk took to pin ({@link #pace}). */
  private volatile double restRatio;
  /** The share of one thread's time that pinning takes while the process is busy. */
  private volatile double busyShare;
  private final NavigableSet<Free> freeBySize = new TreeSet<>(BY_SIZE);
  private final TreeMap<Long, Long> freeByAddress = new TreeMap<>();
  /** Start address of each chunk, to its size. */
  private final TreeMap<Long, Long> chunks = new TreeMap<>();
  private final AtomicLong claimedBytes = new AtomicLong();
  private final List<Thread> pinners = new ArrayList<>();
  private final LongAdder pinNanos = new LongAdder();
  private final LongAdder pausedNanos = new LongAdder();
  private final LongAdder busyPinnedBytes = new LongAdder();
  /** While true, pinning waits before its next chunk ({@link #pauseWhile}). */
  private volatile BooleanSupplier busy = () -> false;
  private long readyBytes;
  private long inUseBytes;
  /** {@link #inUseBytes} above zero, read by the pinning threads without the lock. */
  private volatile boolean piecesOut;
  private long peakInUseBytes;
  private long servedPieces;
  private long refusedPieces;
  private long refusedBytes;
  private volatile String pinFailure;
  private volatile boolean closed;

  private record Free(long address, long size) {}

  /**
   * An arena that will hold {@code targetBytes} of {@code allocator}'s memory once {@link #start}
   * has pinned it, in chunks of at most {@code chunkBytes}.
   */
  public PinnedArena(NativeAllocator allocator, long targetBytes, long chunkBytes) {
    if (targetBytes < 0 || chunkBytes < ALIGN_BYTES || chunkBytes % ALIGN_BYTES != 0) {
      throw new IllegalArgumentException("arena of " + targetBytes + " bytes in chunks of "
          + chunkBytes);
    }
    this.allocator = allocator;
    this.targetBytes = targetBytes / ALIGN_BYTES * ALIGN_BYTES;
    this.chunkBytes = chunkBytes;
  }

  /**
   * Starts {@code threads} daemon threads that pin the arena chunk by chunk and return; each chunk
   * serves requests as soon as it is pinned. A chunk the allocator refuses stops the growth where
   * it is (logged once): the arena then stays smaller than its target.
   */
  public synchronized void start(int threads) {
    if (!pinners.isEmpty() || closed || targetBytes == 0) {
      return;
    }
    for (int i = 0; i < Math.max(1, threads); i++) {
      int index = i;
      Thread t = new Thread(() -> pinChunks(index), "gpusort-pinned-arena-" + i);
      t.setDaemon(true);
      pinners.add(t);
      t.start();
    }
  }

  /**
   * Pinning waits before each chunk while {@code busy} says so: for sorts running on the device,
   * whose copies and launches the driver would hold back while it pins a chunk (on the H200
   * host, a job that opened the engine itself ran 2.3x slower while its arena was pinned beside
   * it). What is pinned serves at once; the rest is pinned between the sorts.
   */
  public void pauseWhile(BooleanSupplier value) {
    busy = value;
  }

  /**
   * After each chunk, its pinning thread rests {@code ratio} times as long as the chunk took (0:
   * no rest). The driver's own allocation ({@link PinMethod#DRIVER}) holds the process's memory
   * map while it runs, so every other thread of the process that touches new memory or loads a
   * class waits for the chunk under way: on the lent H100 host, while two threads pinned 31 GiB in
   * 256 MiB chunks (17 s), the driver's main thread loaded a class in 5-15 ms instead of 0.3-0.6
   * (2026-12-06). A rest lets the others through between chunks, at the cost of a longer
   * pinning.
   */
  public void pace(double ratio) {
    if (!(ratio >= 0)) {
      throw new IllegalArgumentException("rest ratio " + ratio);
    }
    restRatio = ratio;
  }

  /**
   * While the process is busy ({@link #pauseWhile}, pieces in use), the first pinning thread goes
   * on pinning, one chunk at a time, spending at most {@code share} of its time on it: after each
   * chunk it rests {@code 1 / share - 1} times as long as the chunk took. The others wait. 0: all
   * wait while the process is busy. An arena that pins only while the process is idle is never
   * whole in an executor that is never idle: on the lent H100 host a benchmark JVM running query
   * after query stayed at 19.75 of 31.46 GiB through a whole size series (2026-12-07), its larger
   * sorts' pages going through the staging buffers. Ignored, as 0, where the allocator holds the
   * process's memory map ({@link NativeAllocator#holdsMemoryMap}): then every thread beside it
   * waits, which cost a one-shot job 12-17 s on the H200 host.
   */
  public void pinWhileBusy(double share) {
    if (!(share >= 0 && share <= 1)) {
      throw new IllegalArgumentException("busy share " + share);
    }
    busyShare = share;
  }

  /** Bytes pinned while the process was busy ({@link #pinWhileBusy}). */
  public long busyPinnedBytes() {
    return busyPinnedBytes.sum();
  }

  /** Whether thread {@code index} pins while the process is busy. */
  private boolean pinsWhileBusy(int index) {
    return index == 0 && busyShare > 0 && !allocator.holdsMemoryMap();
  }

  /** Time the pinning threads spent waiting for {@link #pauseWhile}'s condition, summed. */
  public long pausedNanos() {
    return pausedNanos.sum();
  }

  /**
   * Whether pinning should wait: {@link #pauseWhile}'s condition, or pieces of the arena in use
   * (sorts on the device, whatever counts them: on the H200 host a TeraSort job whose engine
   * opened with it ran 31.7 s with its 32 GiB pinned beside its tasks, 14.3 s with no arena).
   */
  private boolean busy() {
    return piecesOut || busy.getAsBoolean();
  }

  /** Waits while the arena is busy; false when it closed or the thread was interrupted. */
  private boolean awaitIdle() {
    if (!busy()) {
      return !closed;
    }
    long start = System.nanoTime();
    try {
      while (!closed && busy()) {
        Thread.sleep(PAUSE_POLL_MILLIS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } finally {
      pausedNanos.add(System.nanoTime() - start);
    }
    return !closed;
  }

  private void pinChunks(int index) {
    while (!closed && pinFailure == null) {
      boolean beside = pinsWhileBusy(index) && busy();
      if (!beside && !awaitIdle()) {
        return;
      }
      long claimed = claimedBytes.get();
      long size = Math.min(chunkBytes, targetBytes - claimed);
      if (size <= 0) {
        return;
      }
      if (!claimedBytes.compareAndSet(claimed, claimed + size)) {
        continue;
      }
      long start = System.nanoTime();
      long address;
      try {
        address = HostMemory.allocate(allocator, size);
      } catch (RuntimeException | OutOfMemoryError e) {
        pinFailure = e.toString();
        LOG.warn("Page-locking the host arena stopped at {} MiB of {} MiB: {}",
            readyBytes() >> 20, targetBytes >> 20, e.toString());
        return;
      }
      long took = System.nanoTime() - start;
      pinNanos.add(took);
      // Idle arena memory is not in use; pieces handed out are counted as they go.
      HostMemory.track(-size);
      beside = beside || pinsWhileBusy(index) && busy();
      if (beside) {
        busyPinnedBytes.add(size);
      }
      if (!addChunk(address, size)) {
        HostMemory.track(size);
        HostMemory.free(allocator, address, size);
        return;
      }
      double ratio = beside ? Math.max(restRatio, 1 / busyShare - 1) : restRatio;
      if (!rest((long) (took * ratio))) {
        return;
      }
    }
  }

  /**
   * Sleeps {@code nanos}, in steps that look whether the arena closed; false once it closed or
   * the thread was interrupted.
   */
  private boolean rest(long nanos) {
    long end = System.nanoTime() + nanos;
    try {
      for (long left = nanos; left > 0 && !closed; left = end - System.nanoTime()) {
        Thread.sleep(Math.min(PAUSE_POLL_MILLIS, Math.max(1, left / 1_000_000)));
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
    return !closed;
  }

  /** Adds a pinned chunk; false (the caller frees it) once the arena is closed. */
  synchronized boolean addChunk(long address, long size) {
    if (closed) {
      return false;
    }
    chunks.put(address, size);
    insertFree(address, size);
    readyBytes += size;
    notifyAll();
    return true;
  }

  /** Waits until every chunk is pinned or pinning stopped, at most {@code timeoutMillis}. */
  public synchronized boolean awaitReady(long timeoutMillis) throws InterruptedException {
    long deadline = System.currentTimeMillis() + timeoutMillis;
    while (readyBytes < targetBytes && pinFailure == null && !closed) {
      long left = deadline - System.currentTimeMillis();
      if (left <= 0) {
        return false;
      }
      wait(Math.min(left, 100));
    }
    return readyBytes >= targetBytes;
  }

  /**
   * The address of {@code sizeBytes} of page-locked memory, now counted in use, or 0 where no
   * pinned chunk has a free range that large (the arena is full, still being pinned, or the
   * request is larger than a chunk). Never waits for pinning.
   */
  public synchronized long tryAllocate(long sizeBytes) {
    long size = align(sizeBytes);
    Free best = size <= chunkBytes ? freeBySize.ceiling(new Free(Long.MIN_VALUE, size)) : null;
    if (best == null || closed) {
      refusedPieces++;
      refusedBytes += size;
      return 0;
    }
    removeFree(best);
    if (best.size() > size) {
      insertFree(best.address() + size, best.size() - size);
    }
    inUseBytes += size;
    piecesOut = true;
    peakInUseBytes = Math.max(peakInUseBytes, inUseBytes);
    servedPieces++;
    HostMemory.track(size);
    return best.address();
  }

  /** Gives back a piece from {@link #tryAllocate} of the same size. */
  public synchronized void release(long address, long sizeBytes) {
    long size = align(sizeBytes);
    inUseBytes -= size;
    piecesOut = inUseBytes > 0;
    HostMemory.track(-size);
    long start = address;
    long end = address + size;
    Map.Entry<Long, Long> left = freeByAddress.floorEntry(address);
    if (left != null && left.getKey() + left.getValue() == address && !chunks.containsKey(address)) {
      removeFree(new Free(left.getKey(), left.getValue()));
      start = left.getKey();
    }
    Long right = freeByAddress.get(end);
    if (right != null && !chunks.containsKey(end)) {
      removeFree(new Free(end, right));
      end += right;
    }
    insertFree(start, end - start);
  }

  /** Whether {@code address} lies in one of this arena's chunks. */
  public synchronized boolean owns(long address) {
    Map.Entry<Long, Long> chunk = chunks.floorEntry(address);
    return chunk != null && address < chunk.getKey() + chunk.getValue();
  }

  private void insertFree(long address, long size) {
    freeBySize.add(new Free(address, size));
    freeByAddress.put(address, size);
  }

  private void removeFree(Free free) {
    freeBySize.remove(free);
    freeByAddress.remove(free.address());
  }

  static long align(long sizeBytes) {
    return Math.max(ALIGN_BYTES, (sizeBytes + ALIGN_BYTES - 1) / ALIGN_BYTES * ALIGN_BYTES);
  }

  /** The bytes this arena pins once started. */
  public long targetBytes() {
    return targetBytes;
  }

  /** Bytes pinned so far. */
  public synchronized long readyBytes() {
    return readyBytes;
  }

  /** Whether pinning stopped short of the target, and why; null if it did not. */
  public String pinFailure() {
    return pinFailure;
  }

  /**
   * How the pinning stands, for reports: its threads still alive, whether it would wait now and
   * for what (pieces handed out, or the process's condition), the time it waited, and why it
   * stopped short where it did.
   */
  public String pinningState() {
    int alive;
    synchronized (this) {
      alive = (int) pinners.stream().filter(Thread::isAlive).count();
    }
    return String.format(java.util.Locale.ROOT, "%d pinning threads alive; process busy now: %s; "
        + "waited %.1f s (threads' sum); pinned while busy %.2f GiB (share %s); stopped: %s",
        alive, piecesOut ? "pieces in use" : busy.getAsBoolean() ? "yes" : "no",
        pausedNanos.sum() / 1e9, busyPinnedBytes.sum() / (double) (1L << 30),
        allocator.holdsMemoryMap() ? "0, the allocator holds the memory map" : busyShare,
        pinFailure == null ? "no" : pinFailure);
  }

  /** What the arena holds and has served so far. */
  public synchronized Stats stats() {
    return new Stats(targetBytes, readyBytes, inUseBytes, peakInUseBytes, servedPieces,
        refusedPieces, refusedBytes, pinNanos.sum(), freeBySize.isEmpty() ? 0
            : freeBySize.last().size());
  }

  /**
   * An arena's figures.
   *
   * @param targetBytes what it pins once started
   * @param readyBytes what is pinned so far
   * @param inUseBytes what is handed out now
   * @param peakInUseBytes the most handed out at once
   * @param servedPieces requests served
   * @param refusedPieces requests refused (served by plain memory instead)
   * @param refusedBytes their bytes
   * @param pinNanos time the background threads spent pinning, summed over them
   * @param largestFreeBytes the largest free range now
   */
  public record Stats(long targetBytes, long readyBytes, long inUseBytes, long peakInUseBytes,
      long servedPieces, long refusedPieces, long refusedBytes, long pinNanos,
      long largestFreeBytes) {
    /** No arena: nothing pinned, nothing served. */
    public static final Stats NONE = new Stats(0, 0, 0, 0, 0, 0, 0, 0, 0);
  }

  /**
   * Stops pinning, waits for the pinning threads, and frees every chunk. Pieces still handed out
   * must not be used afterwards; for tests and arenas that a process drops.
   */
  @Override
  public void close() {
    List<Thread> threads;
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      threads = List.copyOf(pinners);
      notifyAll();
    }
    for (Thread t : threads) {
      try {
        t.join();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
    }
    Map<Long, Long> taken;
    synchronized (this) {
      taken = new TreeMap<>(chunks);
      chunks.clear();
      freeBySize.clear();
      freeByAddress.clear();
      readyBytes = 0;
    }
    for (Map.Entry<Long, Long> chunk : taken.entrySet()) {
      HostMemory.track(chunk.getValue());
      HostMemory.free(allocator, chunk.getKey(), chunk.getValue());
    }
  }
}
