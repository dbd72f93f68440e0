package io.gpusort.memory;

import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The process's one page-locked arena: sized from the last {@link ArenaSettings} given before a
 * GPU engine opens, reserved in the host's register ({@link HostShare}), then pinned in the
 * background for the life of the process: at full speed while no task runs ({@link RunningTasks})
 * and nothing else registered with {@link #pauseWhile} holds it back, else by one thread at
 * {@link ArenaSettings#busyShare} of its time ({@link PinnedArena#pinWhileBusy}).
 */
final class ProcessArena {
  private static final Logger LOG = LoggerFactory.getLogger(ProcessArena.class);
  private static volatile ArenaSettings settings = ArenaSettings.defaults();
  private static volatile PinnedArena arena;
  private static volatile BooleanSupplier busy = () -> false;

  private ProcessArena() {}

  static PinnedArena arena() {
    return arena;
  }

  /** Puts {@code value} in place of the process's arena and returns the one before (tests). */
  static synchronized PinnedArena replace(PinnedArena value) {
    PinnedArena before = arena;
    arena = value;
    return before;
  }

  /**
   * Pinning also pauses while {@code value} says so, in the arena now and any made later (the
   * last value given counts).
   */
  static synchronized void pauseWhile(BooleanSupplier value) {
    busy = value;
  }

  /** Whether pinning waits: a task runs or just ended, or {@link #pauseWhile}'s condition. */
  private static boolean busy() {
    return RunningTasks.busy() || busy.getAsBoolean();
  }

  /** What {@link #busy} waits for now, for reports: the tasks it counts running, the rest. */
  static String busyState() {
    return "tasks counted running " + RunningTasks.count() + ", sorts' condition "
        + busy.getAsBoolean();
  }

  /** The settings given last, or those the arena was made with once it is made. */
  static ArenaSettings settings() {
    return settings;
  }

  static synchronized void configure(ArenaSettings value) {
    if (arena == null) {
      settings = value;
    }
  }

  static synchronized boolean start(NativeAllocator allocator, int devicesOnHost) {
    if (arena != null) {
      return false;
    }
    ArenaSettings s = settings;
    long machine = HostShare.machineMemoryBytes();
    long request = s.requestBytes(machine, devicesOnHost);
    long granted = request == 0 ? 0 : HostShare.reserve(s.registerDir(), request,
        s.hostCapBytes(machine));
    arena = new PinnedArena(allocator, granted, s.chunkBytes());
    arena.pace(s.restRatio());
    arena.pinWhileBusy(s.busyShare());
    arena.pauseWhile(ProcessArena::busy);
    arena.start(s.threads());
    LOG.info("Page-locked host arena: {} MiB asked ({}), {} MiB granted of the host's {} MiB "
        + "share ({} of {} MiB, {} GPUs), pinned by {} background threads in {} MiB chunks, "
        + "resting {} times a chunk's time after each, {} of a thread's time while tasks run",
        request >> 20,
        s.requestedBytes() == ArenaSettings.AUTO ? "auto" : "set", granted >> 20,
        s.hostCapBytes(machine) >> 20, s.hostFraction(), machine >> 20, devicesOnHost,
        s.threads(), s.chunkBytes() >> 20, s.restRatio(), s.busyShare());
    Runtime.getRuntime().addShutdownHook(new Thread(() -> HostShare.unregister(s.registerDir()),
        "gpusort-arena-unregister"));
    return true;
  }
}
