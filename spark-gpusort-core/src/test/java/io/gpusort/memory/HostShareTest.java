package io.gpusort.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The host's register of page-locked memory: live processes' shares count against the host's
 * cap, ended processes' entries are dropped, and the arena's automatic size divides the host's
 * share among its GPUs within any container bound.
 */
class HostShareTest {
  private static final long GIB = 1L << 30;

  private static void register(Path dir, ProcessHandle process, long bytes) throws IOException {
    long start = process.info().startInstant().map(java.time.Instant::toEpochMilli).orElse(-1L);
    Files.writeString(dir.resolve(Long.toString(process.pid())), bytes + " " + start + "\n");
  }

  @Test
  void aLiveProcessShareCountsAndAnEndedOneIsDropped(@TempDir Path dir) throws Exception {
    ProcessHandle parent = ProcessHandle.current().parent().orElseThrow();
    register(dir, parent, 6 * GIB);
    Process ended = new ProcessBuilder("true").start();
    ended.waitFor();
    register(dir, ended.toHandle(), 5 * GIB);
    long granted = HostShare.reserve(dir, 8 * GIB, 10 * GIB);
    assertEquals(4 * GIB, granted, "10 GiB for the host, 6 held by a live process");
    assertFalse(Files.exists(dir.resolve(Long.toString(ended.pid()))),
        "the ended process's entry is dropped");
    Path own = dir.resolve(Long.toString(ProcessHandle.current().pid()));
    assertTrue(Files.readString(own).startsWith(4 * GIB + " "), "this process's grant recorded");
    // Asking again replaces this process's entry rather than adding to it.
    assertEquals(4 * GIB, HostShare.reserve(dir, 8 * GIB, 10 * GIB));
    HostShare.unregister(dir);
    assertFalse(Files.exists(own));
    assertEquals(0, HostShare.reserve(dir, 8 * GIB, 6 * GIB), "nothing left on the host");
  }

  @Test
  void aRequestWithinTheCapIsGrantedWhole(@TempDir Path dir) {
    assertEquals(3 * GIB, HostShare.reserve(dir.resolve("new/sub"), 3 * GIB, 10 * GIB));
    assertEquals(10 * GIB, HostShare.reserve(dir, 30 * GIB, 10 * GIB), "never past the cap");
  }

  @Test
  void anUnusableRegisterStillBoundsByTheCap(@TempDir Path dir) throws IOException {
    Path file = dir.resolve("not-a-directory");
    Files.writeString(file, "x");
    assertEquals(2 * GIB, HostShare.reserve(file, 2 * GIB, 10 * GIB));
    assertEquals(10 * GIB, HostShare.reserve(file, 20 * GIB, 10 * GIB));
  }

  @Test
  void machineMemoryIsKnown() {
    long bytes = HostShare.machineMemoryBytes();
    assertTrue(bytes >= Runtime.getRuntime().maxMemory() / 4 && bytes < 1L << 50,
        "machine memory " + bytes);
  }

  @Test
  void autoSizeDividesTheHostShareAmongGpusWithinTheBound() {
    ArenaSettings auto = ArenaSettings.defaults();
    assertEquals(32 * GIB, auto.hostCapBytes(128 * GIB));
    assertEquals(32 * GIB, auto.requestBytes(128 * GIB, 1));
    assertEquals(8 * GIB, auto.requestBytes(128 * GIB, 4));
    assertEquals(32 * GIB, auto.requestBytes(128 * GIB, 0), "no GPU counted: one");
    ArenaSettings bounded = new ArenaSettings(ArenaSettings.AUTO, 0.25, 3 * GIB,
        ArenaSettings.DEFAULT_REGISTER, 2, 0, PinMethod.HUGEPAGES);
    assertEquals(3 * GIB, bounded.requestBytes(128 * GIB, 1));
    ArenaSettings set = new ArenaSettings(12 * GIB, 0.25, Long.MAX_VALUE,
        ArenaSettings.DEFAULT_REGISTER, 2, 0, PinMethod.HUGEPAGES);
    assertEquals(12 * GIB, set.requestBytes(128 * GIB, 8), "a set size is not divided");
    assertThrows(IllegalArgumentException.class, () -> new ArenaSettings(-2, 0.25,
        Long.MAX_VALUE, ArenaSettings.DEFAULT_REGISTER, 2, 0, PinMethod.HUGEPAGES));
    assertThrows(IllegalArgumentException.class, () -> new ArenaSettings(0, 0.95,
        Long.MAX_VALUE, ArenaSettings.DEFAULT_REGISTER, 2, 0, PinMethod.HUGEPAGES));
    assertThrows(IllegalArgumentException.class, () -> new ArenaSettings(0, 0.25,
        Long.MAX_VALUE, ArenaSettings.DEFAULT_REGISTER, 2, -1, PinMethod.HUGEPAGES));
  }

  /** A pinning that rests does so with one thread in small chunks; at full speed, as set. */
  @Test
  void aRestingPinningUsesOneThreadAndSmallChunks() {
    ArenaSettings full = ArenaSettings.defaults();
    assertFalse(full.paced());
    assertEquals(ArenaSettings.DEFAULT_PIN_THREADS, full.threads());
    assertEquals(PinnedArena.DEFAULT_CHUNK_BYTES, full.chunkBytes());
    ArenaSettings paced = new ArenaSettings(ArenaSettings.AUTO, 0.25, Long.MAX_VALUE,
        ArenaSettings.DEFAULT_REGISTER, 4, 1.5, PinMethod.HUGEPAGES);
    assertTrue(paced.paced());
    assertEquals(1, paced.threads());
    assertEquals(ArenaSettings.PACED_CHUNK_BYTES, paced.chunkBytes());
  }
}
