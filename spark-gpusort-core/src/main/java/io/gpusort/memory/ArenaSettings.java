package io.gpusort.memory;

import java.nio.file.Path;

/**
 * How large the process's page-locked arena ({@link PinnedArena}) is made when a GPU engine first
 * opens.
 *
 * @param requestedBytes the arena asked for, or {@link #AUTO}: the host's share divided among
 *     the GPUs of the host (one executor per GPU being the usual layout)
 * @param hostFraction the share of the machine's memory ({@link HostShare#machineMemoryBytes})
 *     that the arenas of every process on the host may pin together
 * @param boundBytes a further bound, such as what a container manager counts for it (the
 *     executor's memory overhead beyond Spark's own); {@code Long.MAX_VALUE} for none
 * @param registerDir the host-wide register of page-locked memory ({@link HostShare#reserve})
 * @param pinThreads threads that pin the arena's chunks at once, where they do not rest
 * @param restRatio 0: pinning at full speed, {@code pinThreads} threads in chunks of {@link
 *     PinnedArena#DEFAULT_CHUNK_BYTES}; above 0: one thread in chunks of {@link
 *     #PACED_CHUNK_BYTES}, resting after each this many times as long as it took ({@link
 *     PinnedArena#pace})
 * @param pinMethod how a GPU engine page-locks the memory
 * @param busyShare the share of one thread's time that pinning takes while tasks run ({@link
 *     PinnedArena#pinWhileBusy}); 0: pinning only while no task runs
 */
public record ArenaSettings(long requestedBytes, double hostFraction, long boundBytes,
    Path registerDir, int pinThreads, double restRatio, PinMethod pinMethod, double busyShare) {
  /** {@link #requestedBytes} that means: the host's share, divided among its GPUs. */
  public static final long AUTO = -1;
  /** The register's directory unless configured: one place every process of the host sees. */
  public static final Path DEFAULT_REGISTER = Path.of("/tmp/spark-gpusort-pinned");
  public static final double DEFAULT_HOST_FRACTION = 0.25;
  public static final int DEFAULT_PIN_THREADS = 2;
  /**
   * A quarter of one thread while tasks run: on huge pages a 256 MiB chunk takes about 20-40 ms
   * (faulting its pages in, then a few ms in the driver), so about 1.5-3 GiB a second, for a
   * sixty-fourth of a 16-core executor's threads.
   */
  public static final double DEFAULT_BUSY_SHARE = 0.25;
  /** The chunks of a pinning that rests: each holds the process's memory map a quarter as long. */
  public static final long PACED_CHUNK_BYTES = 64L << 20;

  public ArenaSettings {
    if (requestedBytes < AUTO || hostFraction < 0 || hostFraction > 0.9 || boundBytes < 0
        || registerDir == null || pinThreads < 1 || !(restRatio >= 0) || pinMethod == null
        || !(busyShare >= 0 && busyShare <= 1)) {
      throw new IllegalArgumentException("bad arena settings: requestedBytes=" + requestedBytes
          + " hostFraction=" + hostFraction + " boundBytes=" + boundBytes + " pinThreads="
          + pinThreads + " restRatio=" + restRatio + " pinMethod=" + pinMethod + " busyShare="
          + busyShare);
    }
  }

  /** The settings with the default {@link #busyShare}. */
  public ArenaSettings(long requestedBytes, double hostFraction, long boundBytes,
      Path registerDir, int pinThreads, double restRatio, PinMethod pinMethod) {
    this(requestedBytes, hostFraction, boundBytes, registerDir, pinThreads, restRatio, pinMethod,
        DEFAULT_BUSY_SHARE);
  }

  /** Automatic size, a quarter of the host, no further bound. */
  public static ArenaSettings defaults() {
    return new ArenaSettings(AUTO, DEFAULT_HOST_FRACTION, Long.MAX_VALUE, DEFAULT_REGISTER,
        DEFAULT_PIN_THREADS, 0, PinMethod.HUGEPAGES);
  }

  /** Whether the pinning rests between chunks. */
  public boolean paced() {
    return restRatio > 0;
  }

  /** Threads that pin at once: one where the pinning rests. */
  public int threads() {
    return paced() ? 1 : pinThreads;
  }

  /** The chunks pinned one at a time. */
  public long chunkBytes() {
    return paced() ? PACED_CHUNK_BYTES : PinnedArena.DEFAULT_CHUNK_BYTES;
  }

  /** What the host's processes may pin together on a machine of {@code machineBytes}. */
  public long hostCapBytes(long machineBytes) {
    return (long) (hostFraction * machineBytes);
  }

  /**
   * The arena this process asks the register for on a machine of {@code machineBytes} with
   * {@code devicesOnHost} GPUs: the request, or the host's share over its GPUs, within the bound.
   */
  public long requestBytes(long machineBytes, int devicesOnHost) {
    long wanted = requestedBytes == AUTO
        ? hostCapBytes(machineBytes) / Math.max(1, devicesOnHost) : requestedBytes;
    return Math.min(wanted, boundBytes);
  }
}
