package io.gpusort.engine;

/**
 * Where an engine call's time went, per thread: what the calling stage reads before and after a
 * call to report the stages of a sort (transfer to the device, sort, gather, transfer back). A GPU
 * engine measures its stages with device events; the CPU engine counts its sort and gather.
 */
public final class EngineTimes {
  private static final ThreadLocal<EngineTimes> THREAD = ThreadLocal.withInitial(EngineTimes::new);

  /** Nanoseconds copying keys, rows or permutations to the device. */
  public long toDeviceNanos;
  /** Nanoseconds sorting keys. */
  public long sortNanos;
  /** Nanoseconds putting rows in sorted order. */
  public long gatherNanos;
  /** Nanoseconds copying results back to the host. */
  public long fromDeviceNanos;
  /** Nanoseconds waiting for a turn on the device (its bound on tasks at once). */
  public long waitNanos;

  private EngineTimes() {}

  /** The calling thread's running totals. */
  public static EngineTimes ofThread() {
    return THREAD.get();
  }

  /** A copy of the totals, to subtract from later ones. */
  public EngineTimes snapshot() {
    EngineTimes copy = new EngineTimes();
    copy.toDeviceNanos = toDeviceNanos;
    copy.sortNanos = sortNanos;
    copy.gatherNanos = gatherNanos;
    copy.fromDeviceNanos = fromDeviceNanos;
    copy.waitNanos = waitNanos;
    return copy;
  }
}
