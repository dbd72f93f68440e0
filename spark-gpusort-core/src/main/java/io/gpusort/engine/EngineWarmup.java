package io.gpusort.engine;

import io.gpusort.memory.HostBuffer;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A GPU engine's first sorts, run on a background thread as soon as the engine opens, so that the
 * first task does not pay for what only a first call does: loading each kernel into the context,
 * the workspaces' device scratch, compiling the engine's own Java code. The keys are random and
 * the result is checked, so a device that sorts wrongly says so in the log before any task uses
 * it (the task's sort is checked by its own fallback rules, not by this).
 */
final class EngineWarmup {
  private static final Logger LOG = LoggerFactory.getLogger(EngineWarmup.class);
  /** Rows of each warm-up batch: past the kernels' small-input paths, a few milliseconds. */
  static final int ROWS = 1 << 20;
  /** Key widths sorted: one 64-bit word, one narrowed to 32 bits, two words. */
  private static final int[][] SHAPES = {{1, 64}, {1, 32}, {2, 72}};
  /** The name of an engine's own warm-up among {@link #ended()}'s. */
  static final String ENGINE_STEP = "engine";
  private static final List<Thread> RUNNING = new ArrayList<>();
  /** Each engine warmed up, with the thread that warms it. */
  private static final Map<SortEngine, Thread> WARMED = new IdentityHashMap<>();
  /** The names of the steps of layers above started so far, per engine. */
  private static final Map<SortEngine, Set<String>> STEPS = new IdentityHashMap<>();
  /** The warm-ups that ended, in the order they ended. */
  private static final List<WarmupTime> ENDED = new ArrayList<>();

  private EngineWarmup() {}

  /** Starts the warm-up of {@code engine} on a daemon thread. */
  static synchronized void start(SortEngine engine) {
    Thread thread = new Thread(() -> run(engine), "gpusort-engine-warmup");
    thread.setDaemon(true);
    RUNNING.add(thread);
    WARMED.put(engine, thread);
    thread.start();
  }

  /**
   * Runs {@code step} on {@code engine} on a daemon thread once the engine's own warm-up is done:
   * once per engine and {@code name}, and only for an engine that warms up (a GPU engine).
   * Failures are logged; the tasks then pay for what the step would have done.
   */
  static synchronized void then(SortEngine engine, String name, Consumer<SortEngine> step) {
    Thread engineWarmup = WARMED.get(engine);
    if (engineWarmup == null
        || !STEPS.computeIfAbsent(engine, e -> new HashSet<>()).add(name)) {
      return;
    }
    Thread thread = new Thread(() -> {
      try {
        engineWarmup.join();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
      long startMillis = System.currentTimeMillis();
      try {
        step.accept(engine);
        LOG.info("Warmed up {} on {} in {} ms", name, engine.name(),
            ended(name, engine, startMillis, true).millis());
      } catch (RuntimeException | OutOfMemoryError | LinkageError e) {
        ended(name, engine, startMillis, false);
        LOG.warn("Warming up {} on {} failed; tasks will pay for its first use", name,
            engine.name(), e);
      }
    }, "gpusort-" + name + "-warmup");
    thread.setDaemon(true);
    RUNNING.add(thread);
    thread.start();
  }

  /** Records a warm-up that started at {@code startMillis} and ends now; returns it. */
  private static synchronized WarmupTime ended(String step, SortEngine engine, long startMillis,
      boolean completed) {
    WarmupTime time = new WarmupTime(step, engine.name(), startMillis,
        System.currentTimeMillis(), completed);
    ENDED.add(time);
    return time;
  }

  /** The warm-ups that ended so far, in the order they ended. */
  static synchronized List<WarmupTime> ended() {
    return List.copyOf(ENDED);
  }

  /** Warm-ups (the engines' and the steps after them) still running now. */
  static synchronized int running() {
    int n = 0;
    for (Thread t : RUNNING) {
      n += t.isAlive() ? 1 : 0;
    }
    return n;
  }

  /** Waits for every warm-up started so far: engines must not close under one. */
  static void awaitAll() {
    List<Thread> threads;
    synchronized (EngineWarmup.class) {
      threads = new ArrayList<>(RUNNING);
      RUNNING.clear();
    }
    for (Thread t : threads) {
      try {
        t.join();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  static void run(SortEngine engine) {
    long startMillis = System.currentTimeMillis();
    SplittableRandom random = new SplittableRandom(42);
    try {
      for (int[] shape : SHAPES) {
        sortChecked(engine, random, shape[0], shape[1]);
      }
      LOG.info("Warmed up {} in {} ms", engine.name(),
          ended(ENGINE_STEP, engine, startMillis, true).millis());
    } catch (RuntimeException | OutOfMemoryError e) {
      ended(ENGINE_STEP, engine, startMillis, false);
      LOG.warn("Warming up {} failed; tasks will pay for the first calls", engine.name(), e);
    }
  }

  private static void sortChecked(SortEngine engine, SplittableRandom random, int numWords,
      int keyBits) {
    try (HostBuffer words = HostBuffer.acquireTransferable(KeyBatch.requiredBytes(ROWS, numWords));
        HostBuffer permutation = HostBuffer.acquireTransferable(4L * ROWS)) {
      KeyBatch keys = new KeyBatch(words, ROWS, numWords, keyBits);
      for (int w = 0; w < numWords; w++) {
        int bits = Math.min(64, keyBits - 64 * w);
        long mask = bits == 64 ? -1L : ((1L << bits) - 1) << (64 - bits);
        for (int r = 0; r < ROWS; r++) {
          keys.setWord(r, w, random.nextLong() & mask);
        }
      }
      engine.sort(keys, permutation);
      for (int i = 1; i < ROWS; i++) {
        int a = permutation.getInt(4L * (i - 1));
        int b = permutation.getInt(4L * i);
        if (compare(keys, a, b) > 0) {
          throw new IllegalStateException(engine.name() + " put row " + a + " before row " + b
              + " in its warm-up sort of " + keyBits + "-bit keys");
        }
      }
    }
  }

  private static int compare(KeyBatch keys, int a, int b) {
    for (int w = 0; w < keys.numWords(); w++) {
      int c = Long.compareUnsigned(keys.word(a, w), keys.word(b, w));
      if (c != 0) {
        return c;
      }
    }
    return 0;
  }
}
