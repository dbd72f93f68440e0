package io.gpusort.examples;

import io.gpusort.config.GpuSortConf;
import io.gpusort.config.GpuSortConf.EngineChoice;
import io.gpusort.engine.EngineOptions;
import io.gpusort.engine.Engines;
import io.gpusort.memory.ArenaSettings;
import io.gpusort.memory.HostBuffer;
import io.gpusort.memory.PinMethod;
import io.gpusort.memory.PinnedArena;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * How fast the page-locked arena is pinned in the background, and what a piece costs once it is:
 * opens the CUDA engine with an arena of {@code --bytes} pinned by {@code --threads} threads the
 * way {@code --method} says (spark.gpusort.memory.pinned.method),
 * waits until it is whole, prints the wall time and rate, then times taking and giving back
 * pieces of the row path's sizes against plain pooled buffers of the same sizes. One arena per
 * process: run it once per thread count.
 *
 * <pre>
 *   java ... io.gpusort.examples.ArenaBenchmark [--bytes 16g] [--threads 2] [--method hugepages]
 * </pre>
 */
public final class ArenaBenchmark {
  private ArenaBenchmark() {}

  public static void main(String[] argv) throws InterruptedException {
    long bytes = 16L << 30;
    int threads = ArenaSettings.DEFAULT_PIN_THREADS;
    PinMethod method = GpuSortConf.PINNED_METHOD.defaultValue();
    for (int i = 0; i < argv.length; i++) {
      switch (argv[i]) {
        case "--bytes" -> bytes = GpuSortConf.PINNED_ARENA_BYTES.parse(argv[++i]);
        case "--threads" -> threads = Integer.parseInt(argv[++i]);
        case "--method" -> method = GpuSortConf.PINNED_METHOD.parse(argv[++i]);
        default -> {
          System.err.println("usage: ArenaBenchmark [--bytes 16g] [--threads 2] "
              + "[--method hugepages|pages|driver]");
          System.exit(2);
        }
      }
    }
    HostBuffer.configureArena(new ArenaSettings(bytes, 0.9, Long.MAX_VALUE,
        ArenaSettings.DEFAULT_REGISTER, threads, 0, method));
    long start = System.nanoTime();
    Engines.create(EngineOptions.defaults(EngineChoice.CUDA));
    long opened = System.nanoTime();
    boolean whole = HostBuffer.awaitArena(600_000);
    long ready = System.nanoTime();
    PinnedArena.Stats stats = HostBuffer.arenaStats();
    double pinSeconds = (ready - opened) / 1e9;
    System.out.printf(Locale.ROOT, "engine opened in %.3f s; arena %.1f of %.1f GiB pinned by %d "
        + "threads in %.3f s after (%.2f GB/s wall, %.3f s summed over threads)%s%n",
        (opened - start) / 1e9, stats.readyBytes() / (double) (1L << 30),
        stats.targetBytes() / (double) (1L << 30), threads, pinSeconds,
        stats.readyBytes() / pinSeconds / 1e9, stats.pinNanos() / 1e9,
        whole ? "" : " (stopped short)");
    Engines.awaitWarmups();
    timePieces(true);
    timePieces(false);
  }

  /** Takes and gives back pieces of 64 KiB to 32 MiB, as a task's pages are, many times. */
  private static void timePieces(boolean transferable) {
    long[] sizes = {64 << 10, 1 << 20, 8 << 20, 32 << 20};
    int rounds = 2000;
    long start = System.nanoTime();
    for (int r = 0; r < rounds; r++) {
      List<HostBuffer> held = new ArrayList<>();
      for (long size : sizes) {
        held.add(transferable ? HostBuffer.acquireTransferable(size) : HostBuffer.acquire(size));
      }
      for (HostBuffer b : held) {
        b.close();
      }
    }
    double micros = (System.nanoTime() - start) / 1e3 / (rounds * sizes.length);
    System.out.printf(Locale.ROOT, "%s: %.2f us a piece taken and given back%n",
        transferable ? "arena (acquireTransferable)" : "plain pool (acquire)", micros);
  }
}
