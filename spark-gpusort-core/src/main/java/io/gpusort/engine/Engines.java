package io.gpusort.engine;

import io.gpusort.config.GpuSortConf.EngineChoice;
import io.gpusort.engine.cpu.CpuRadixEngine;

/**
 * The engines of this process, created once and shared by every task of an executor: the CPU
 * engine's worker threads are one pool for the whole JVM, so concurrent tasks do not oversubscribe
 * the cores.
 */
public final class Engines {
  private static volatile SortEngine cpu;

  private Engines() {}

  /** The CPU engine: always available, and the reference the GPU engines are checked against. */
  public static SortEngine cpu() {
    SortEngine engine = cpu;
    if (engine == null) {
      synchronized (Engines.class) {
        engine = cpu;
        if (engine == null) {
          engine = new CpuRadixEngine(Runtime.getRuntime().availableProcessors());
          cpu = engine;
        }
      }
    }
    return engine;
  }

  /**
   * The engine for {@code choice}: {@code AUTO} is the best that works here.
   *
   * @throws EngineUnavailableException when a specific engine was demanded and is not available
   */
  public static SortEngine forChoice(EngineChoice choice) {
    checkAvailable(choice);
    return cpu();
  }

  /** Throws unless {@code choice} can run in this process. */
  public static void checkAvailable(EngineChoice choice) {
    switch (choice) {
      case AUTO, CPU -> { }
      case CUDA -> throw new EngineUnavailableException(
          "spark.gpusort.engine=cuda, but this build has no CUDA engine yet; use auto or cpu");
      case VULKAN -> throw new EngineUnavailableException(
          "spark.gpusort.engine=vulkan, but this build has no Vulkan engine yet; use auto or cpu");
      default -> throw new IllegalArgumentException("unknown engine " + choice);
    }
  }

  /** The engine demanded by configuration cannot run here. */
  public static final class EngineUnavailableException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public EngineUnavailableException(String message) {
      super(message);
    }
  }
}
