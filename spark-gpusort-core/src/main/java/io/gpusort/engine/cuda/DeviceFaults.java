package io.gpusort.engine.cuda;

import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Device memory failures injected for tests, by the phase of a sort that meets them: the next
 * {@code count} device allocations of a phase fail as an exhausted device does
 * ({@link DeviceMemoryExhaustedException}), so that tests show what the engine does about them
 * (wait, retry in smaller pieces, decline a gather, fall back) on a real device. Off unless a
 * test asks; a check is one read of an array slot.
 */
public final class DeviceFaults {
  /** Where in a sort a device allocation is made. */
  public enum Phase {
    /** Keys and rows sent to the device (a piece's key columns, rows sent ahead of the sort). */
    UPLOAD,
    /** A sort's or merge's working buffers on the device. */
    SORT,
    /** The buffers of the rows gathered into sorted order on the device. */
    GATHER,
    /** The copy back of a sorted result (a permutation, or rows gathered on the device). */
    DOWNLOAD
  }

  private static final int PHASES = Phase.values().length;
  private static final AtomicIntegerArray PENDING = new AtomicIntegerArray(PHASES);
  private static final AtomicLongArray INJECTED = new AtomicLongArray(PHASES);

  private DeviceFaults() {}

  /** Makes the next {@code count} allocations of {@code phase} in this process fail. */
  public static void failNext(Phase phase, int count) {
    if (count < 0) {
      throw new IllegalArgumentException("count must not be negative: " + count);
    }
    PENDING.set(phase.ordinal(), count);
  }

  /** Cancels the failures not yet met, in every phase. */
  public static void clear() {
    for (int i = 0; i < PHASES; i++) {
      PENDING.set(i, 0);
    }
  }

  /** Failures injected in {@code phase} so far in this process. */
  public static long injected(Phase phase) {
    return INJECTED.get(phase.ordinal());
  }

  /** Failures asked for in {@code phase} and not yet met. */
  public static int pending(Phase phase) {
    return PENDING.get(phase.ordinal());
  }

  /**
   * Throws as an exhausted device would when a failure of {@code phase} is pending, counting it;
   * called before each device allocation and copy back of that phase.
   */
  static void check(Phase phase, long sizeBytes) {
    int i = phase.ordinal();
    if (PENDING.get(i) > 0 && PENDING.getAndUpdate(i, p -> Math.max(0, p - 1)) > 0) {
      INJECTED.incrementAndGet(i);
      throw new DeviceMemoryExhaustedException("injected device memory failure ("
          + phase.name().toLowerCase(java.util.Locale.ROOT) + ", " + sizeBytes + " bytes)");
    }
  }
}
