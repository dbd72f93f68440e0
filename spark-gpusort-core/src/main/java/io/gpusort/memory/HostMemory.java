package io.gpusort.memory;

import java.lang.reflect.Field;
import java.util.concurrent.atomic.AtomicLong;
import sun.misc.Unsafe;

/**
 * Off-heap host memory: raw allocation, the accessors the engines use, and a process-wide count of
 * bytes in use so that tests can fail on leaks.
 *
 * <p>Addresses are plain {@code long}s so that one buffer can exceed 2 GiB (a {@code ByteBuffer}
 * cannot) and so that the GPU engines can hand the same address to the driver as pinned staging.
 */
public final class HostMemory {
  static final Unsafe UNSAFE = loadUnsafe();
  private static final long INT_ARRAY_OFFSET = UNSAFE.arrayBaseOffset(int[].class);
  private static final long LONG_ARRAY_OFFSET = UNSAFE.arrayBaseOffset(long[].class);

  private static final AtomicLong BYTES_IN_USE = new AtomicLong();
  /** Per kind (0 plain, 1 page-locked): blocks allocated, their bytes, and the time spent. */
  private static final Tally[] BLOCKS = {new Tally(), new Tally()};
  private static final Tally[] BYTES = {new Tally(), new Tally()};
  private static final Tally[] ALLOCATE_NANOS = {new Tally(), new Tally()};
  private static final Tally[] FREE_NANOS = {new Tally(), new Tally()};

  private HostMemory() {}

  private static Unsafe loadUnsafe() {
    try {
      Field field = Unsafe.class.getDeclaredField("theUnsafe");
      field.setAccessible(true);
      return (Unsafe) field.get(null);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  /** Bytes allocated through {@link HostBuffer} and not yet freed, in this process. */
  public static long bytesInUse() {
    return BYTES_IN_USE.get();
  }

  static void track(long deltaBytes) {
    BYTES_IN_USE.addAndGet(deltaBytes);
  }

  static long allocate(long sizeBytes) {
    return allocate(NativeAllocator.UNSAFE, sizeBytes);
  }

  static void free(long address, long sizeBytes) {
    free(NativeAllocator.UNSAFE, address, sizeBytes);
  }

  static long allocate(NativeAllocator allocator, long sizeBytes) {
    long start = System.nanoTime();
    long address = allocator.allocate(sizeBytes);
    int kind = allocator.pinned() ? 1 : 0;
    ALLOCATE_NANOS[kind].add(System.nanoTime() - start);
    BLOCKS[kind].increment();
    BYTES[kind].add(sizeBytes);
    BYTES_IN_USE.addAndGet(sizeBytes);
    return address;
  }

  static void free(NativeAllocator allocator, long address, long sizeBytes) {
    long start = System.nanoTime();
    allocator.free(address, sizeBytes);
    FREE_NANOS[allocator.pinned() ? 1 : 0].add(System.nanoTime() - start);
    BYTES_IN_USE.addAndGet(-sizeBytes);
  }

  /**
   * What the process's native blocks have cost so far, page-locked or plain: a page-locked block
   * is pinned by the driver when it is allocated, which takes long, so a pool that has to grow
   * shows here.
   */
  public static Allocations allocations(boolean pinned) {
    int kind = pinned ? 1 : 0;
    return new Allocations(BLOCKS[kind].sum(), BYTES[kind].sum(), ALLOCATE_NANOS[kind].sum(),
        FREE_NANOS[kind].sum());
  }

  /** Blocks allocated, their bytes, and the nanoseconds spent allocating and freeing blocks. */
  public record Allocations(long blocks, long bytes, long allocateNanos, long freeNanos) {
    /** What was allocated since {@code earlier}. */
    public Allocations since(Allocations earlier) {
      return new Allocations(blocks - earlier.blocks, bytes - earlier.bytes,
          allocateNanos - earlier.allocateNanos, freeNanos - earlier.freeNanos);
    }
  }

  public static long getLong(long address) {
    return UNSAFE.getLong(address);
  }

  public static void putLong(long address, long value) {
    UNSAFE.putLong(address, value);
  }

  public static int getInt(long address) {
    return UNSAFE.getInt(address);
  }

  public static void putInt(long address, int value) {
    UNSAFE.putInt(address, value);
  }

  /** The offset of element 0 of a {@code byte[]}, for the object-relative accessors. */
  public static final long BYTE_ARRAY_OFFSET = UNSAFE.arrayBaseOffset(byte[].class);

  /** The long at {@code offset} of {@code base} (an array, or null for an absolute address). */
  public static long getLong(Object base, long offset) {
    return UNSAFE.getLong(base, offset);
  }

  public static void putLong(Object base, long offset, long value) {
    UNSAFE.putLong(base, offset, value);
  }

  public static int getInt(Object base, long offset) {
    return UNSAFE.getInt(base, offset);
  }

  public static void putInt(Object base, long offset, int value) {
    UNSAFE.putInt(base, offset, value);
  }

  /** Copies between arrays and off-heap memory: a null base makes its offset an address. */
  public static void copy(Object srcBase, long srcOffset, Object dstBase, long dstOffset,
      long sizeBytes) {
    UNSAFE.copyMemory(srcBase, srcOffset, dstBase, dstOffset, sizeBytes);
  }

  public static void copy(long srcAddress, long dstAddress, long sizeBytes) {
    UNSAFE.copyMemory(srcAddress, dstAddress, sizeBytes);
  }

  public static void fill(long address, long sizeBytes, byte value) {
    UNSAFE.setMemory(address, sizeBytes, value);
  }

  /** Copies {@code count} longs from off-heap memory into {@code dst[dstIndex..]}. */
  public static void copyToArray(long srcAddress, long[] dst, int dstIndex, int count) {
    UNSAFE.copyMemory(null, srcAddress, dst, LONG_ARRAY_OFFSET + 8L * dstIndex, 8L * count);
  }

  /** Copies {@code count} longs from {@code src[srcIndex..]} into off-heap memory. */
  public static void copyFromArray(long[] src, int srcIndex, long dstAddress, int count) {
    UNSAFE.copyMemory(src, LONG_ARRAY_OFFSET + 8L * srcIndex, null, dstAddress, 8L * count);
  }

  /** Copies {@code count} ints from off-heap memory into {@code dst[dstIndex..]}. */
  public static void copyToArray(long srcAddress, int[] dst, int dstIndex, int count) {
    UNSAFE.copyMemory(null, srcAddress, dst, INT_ARRAY_OFFSET + 4L * dstIndex, 4L * count);
  }

  /** Copies {@code count} ints from {@code src[srcIndex..]} into off-heap memory. */
  public static void copyFromArray(int[] src, int srcIndex, long dstAddress, int count) {
    UNSAFE.copyMemory(src, INT_ARRAY_OFFSET + 4L * srcIndex, null, dstAddress, 4L * count);
  }
}
