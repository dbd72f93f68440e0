package io.gpusort.engine;

/**
 * When one background warm-up ran: an engine's own ({@code step} "engine") or a step of a layer
 * above run after it (the row path's), for reports that set a first query beside it.
 *
 * @param step the step's name
 * @param engine the engine's name
 * @param startMillis when it started (wall clock, epoch milliseconds)
 * @param endMillis when it ended
 * @param completed false where it failed (the tasks then pay for what it would have done)
 */
public record WarmupTime(String step, String engine, long startMillis, long endMillis,
    boolean completed) {
  /** Its duration in milliseconds. */
  public long millis() {
    return endMillis - startMillis;
  }

  /** Its duration in seconds. */
  public double seconds() {
    return millis() / 1e3;
  }
}
