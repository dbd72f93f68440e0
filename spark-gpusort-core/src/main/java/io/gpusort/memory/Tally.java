package io.gpusort.memory;

import java.util.concurrent.atomic.AtomicLongArray;

/**
 * A sum that many threads add to: the process's counters on the sort's hot paths (rows taken in,
 * bytes allocated, engine calls).
 *
 * <p>Why not {@link java.util.concurrent.atomic.LongAdder}: its {@code add} takes another branch
 * once two threads first collide on it. Code the JIT compiled while one thread added (the row
 * path's warm-up, before any query) has that branch left out, and the first collision throws the
 * compiled code of every method that inlined the add away, inside the first query, while every
 * core runs a task. The H100 host's recording of a first sort of 1e8 Parquet rows shows it:
 * {@code RunBuilder.append} made not entrant 0.84 s into the run and compiled again while 16
 * tasks ran its loop in the interpreter. Here every add takes the same path whoever adds: an
 * atomic add into one of a fixed set of slots, picked by the adding thread, each slot on a cache
 * line of its own so that tasks on different cores seldom share one.
 */
public final class Tally {
  /** Slots: a power of two, more than the cores of a typical executor. */
  private static final int SLOTS = 64;
  /** Longs between two slots: 64 bytes, a cache line. */
  private static final int SPREAD = 8;

  private final AtomicLongArray slots = new AtomicLongArray(SLOTS * SPREAD);

  /** Adds {@code n}. */
  public void add(long n) {
    slots.getAndAdd(slot(), n);
  }

  /** Adds one. */
  public void increment() {
    add(1);
  }

  /** The sum of every add so far; adds made while it is read may or may not be in it. */
  public long sum() {
    long sum = 0;
    for (int i = 0; i < SLOTS; i++) {
      sum += slots.get(i * SPREAD);
    }
    return sum;
  }

  /** The adding thread's slot: threads numbered one after another take different slots. */
  @SuppressWarnings("deprecation") // Thread.threadId() is Java 19's; this builds for Java 17
  private static int slot() {
    return (int) (Thread.currentThread().getId() & (SLOTS - 1)) * SPREAD;
  }
}
