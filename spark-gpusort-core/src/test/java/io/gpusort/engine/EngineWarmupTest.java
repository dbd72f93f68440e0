package io.gpusort.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpusort.engine.cpu.CpuRadixEngine;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What the background warm-ups record of when they ran, for the benchmarks' reports. */
class EngineWarmupTest {
  @Test
  void eachEndedWarmupIsRecordedInOrderWithItsTimes() throws InterruptedException {
    // An engine of its own, so that its warm-up and steps run here whatever ran before.
    SortEngine engine = new CpuRadixEngine();
    int before = Engines.warmupsEnded().size();
    long start = System.currentTimeMillis();
    EngineWarmup.start(engine);
    EngineWarmup.then(engine, "sleeping", e -> sleep(50));
    EngineWarmup.then(engine, "failing", e -> {
      throw new IllegalStateException("a step that fails");
    });
    EngineWarmup.awaitAll();
    List<WarmupTime> ended = Engines.warmupsEnded().subList(before,
        Engines.warmupsEnded().size());
    assertEquals(3, ended.size(), ended.toString());
    WarmupTime own = ended.get(0);
    assertEquals(EngineWarmup.ENGINE_STEP, own.step(), "the engine's own warm-up ends first");
    assertTrue(own.completed());
    WarmupTime sleeping = ended.stream().filter(w -> w.step().equals("sleeping")).findFirst()
        .orElseThrow();
    WarmupTime failing = ended.stream().filter(w -> w.step().equals("failing")).findFirst()
        .orElseThrow();
    for (WarmupTime w : ended) {
      assertEquals(engine.name(), w.engine());
      assertTrue(w.startMillis() >= start && w.endMillis() >= w.startMillis(), w.toString());
    }
    assertTrue(sleeping.completed());
    assertTrue(sleeping.seconds() >= 0.045, "slept 50 ms: " + sleeping);
    assertTrue(sleeping.startMillis() >= own.endMillis(), "a step starts after the engine's");
    assertFalse(failing.completed(), "a failed step is recorded as failed");
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
