package io.gpusort.engine;

import io.gpusort.config.GpuSortConf.Algorithm;
import io.gpusort.config.GpuSortConf.EngineChoice;
import io.gpusort.engine.cpu.CpuRadixEngine;
import io.gpusort.engine.cuda.CudaEngine;
import io.gpusort.engine.vulkan.Vulkan;
import io.gpusort.engine.vulkan.VulkanEngine;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The engines of this process, created once and shared by every task of an executor: the CPU
 * engine's worker threads are one pool for the whole JVM, so concurrent tasks do not oversubscribe
 * the cores, and a GPU engine holds one context and one memory pool per device. Engines handed out
 * here are shared: closing one does nothing.
 */
public final class Engines {
  private static final Logger LOG = LoggerFactory.getLogger(Engines.class);
  private static volatile SortEngine cpu;
  /** CUDA engines by device ordinal and algorithm; never closed (they live as long as the JVM). */
  private static final Map<String, SortEngine> CUDA = new HashMap<>();
  /** Vulkan engines by device choice and algorithm; never closed, like the CUDA ones. */
  private static final Map<String, SortEngine> VULKAN = new HashMap<>();
  /** Why {@code auto} could not open a CUDA device here, once known; logged once. */
  private static String cudaUnusable;
  /** Why {@code auto} could not open a hardware Vulkan device here, once known; logged once. */
  private static String vulkanUnusable;

  private Engines() {}

  /** The CPU engine: always available, and the reference the GPU engines are checked against. */
  public static SortEngine cpu() {
    SortEngine engine = cpu;
    if (engine == null) {
      synchronized (Engines.class) {
        engine = cpu;
        if (engine == null) {
          engine = new Shared(new CpuRadixEngine(Runtime.getRuntime().availableProcessors()));
          cpu = engine;
        }
      }
    }
    return engine;
  }

  /**
   * The engine {@code options} ask for: {@code AUTO} is the best that works here (CUDA when a
   * device opens, else Vulkan when a hardware device opens, else the CPU engine; it never fails
   * for want of a GPU, of {@code libcuda} or of {@code libvulkan}).
   *
   * @throws EngineUnavailableException when a specific engine was demanded and is not available
   */
  public static SortEngine create(EngineOptions options) {
    switch (options.engine()) {
      case CPU:
        return cpu();
      case CUDA:
        try {
          return cuda(options);
        } catch (EngineException e) {
          throw new EngineUnavailableException(
              "spark.gpusort.engine=cuda, but no CUDA device works here: " + e.getMessage());
        }
      case AUTO:
        return auto(options);
      case VULKAN:
        try {
          return vulkan(options);
        } catch (EngineException | LinkageError e) {
          throw new EngineUnavailableException(
              "spark.gpusort.engine=vulkan, but no Vulkan device works here: " + e.getMessage());
        }
      default:
        throw new IllegalArgumentException("unknown engine " + options.engine());
    }
  }

  private static SortEngine auto(EngineOptions options) {
    boolean tryCuda;
    synchronized (Engines.class) {
      tryCuda = cudaUnusable == null;
    }
    if (tryCuda) {
      if (!CudaEngine.available()) {
        markCudaUnusable(CudaEngine.unavailableReason());
      } else {
        try {
          return cuda(options);
        } catch (EngineException | LinkageError e) {
          markCudaUnusable(e.toString());
        }
      }
    }
    synchronized (Engines.class) {
      if (vulkanUnusable != null) {
        return cpu();
      }
    }
    try {
      if (!VulkanEngine.hardwareAvailable()) {
        markVulkanUnusable(VulkanEngine.unavailableReason());
        return cpu();
      }
      // auto never takes a software device, whatever the options say.
      return vulkan(options.withVulkanDevice(-1, false));
    } catch (EngineException | LinkageError e) {
      markVulkanUnusable(e.toString());
      return cpu();
    }
  }

  /**
   * The engine for {@code choice} with default options.
   *
   * @throws EngineUnavailableException when a specific engine was demanded and is not available
   */
  public static SortEngine forChoice(EngineChoice choice) {
    return create(EngineOptions.defaults(choice));
  }

  /** Throws unless {@code choice} can run in this process, with the default options. */
  public static void checkAvailable(EngineChoice choice) {
    checkAvailable(EngineOptions.defaults(choice));
  }

  /**
   * Throws unless the engine {@code options} demand can run in this process: for Vulkan, a
   * device that the options' device index and software setting allow.
   */
  public static void checkAvailable(EngineOptions options) {
    EngineChoice choice = options.engine();
    switch (choice) {
      case AUTO, CPU -> { }
      case CUDA -> {
        if (!CudaEngine.available()) {
          throw new EngineUnavailableException("spark.gpusort.engine=cuda, but CUDA is not "
              + "usable here: " + CudaEngine.unavailableReason() + "; use auto or cpu");
        }
      }
      case VULKAN -> {
        if (!Vulkan.available()) {
          throw new EngineUnavailableException("spark.gpusort.engine=vulkan, but Vulkan is not "
              + "usable here: " + Vulkan.unavailableReason() + "; use auto or cpu");
        }
        if (Vulkan.choose(options.vulkanDevice(), options.vulkanAllowSoftware()).isEmpty()) {
          throw new EngineUnavailableException("spark.gpusort.engine=vulkan, but no Vulkan "
              + "device qualifies here (" + Vulkan.devices() + "); a software device needs "
              + "spark.gpusort.vulkan.allowSoftware=true or spark.gpusort.vulkan.device; use auto "
              + "or cpu");
        }
      }
      default -> throw new IllegalArgumentException("unknown engine " + choice);
    }
  }

  private static SortEngine cuda(EngineOptions options) {
    int device = Math.max(0, options.cudaDevice());
    return cached(CUDA, device + "/" + options.algorithm(), options.algorithm(),
        () -> new CudaEngine(options.withCudaDevice(device)), true);
  }

  private static SortEngine vulkan(EngineOptions options) {
    return cached(VULKAN, options.vulkanDevice() + "/" + options.vulkanAllowSoftware() + "/"
        + options.algorithm() + "/" + options.vulkanDebug(), options.algorithm(),
        () -> new VulkanEngine(options), false);
  }

  /**
   * The process's engine under {@code key} in {@code cache}, opened (and logged) the first time,
   * and then warmed up in the background where {@code warmUp} ({@link EngineWarmup}).
   */
  private static SortEngine cached(Map<String, SortEngine> cache, String key, Algorithm algorithm,
      java.util.function.Supplier<SortEngine> open, boolean warmUp) {
    synchronized (Engines.class) {
      SortEngine engine = cache.get(key);
      if (engine == null) {
        engine = new Shared(open.get());
        LOG.info("Sorting on {} with algorithm {}", describe(engine),
            algorithm.name().toLowerCase(java.util.Locale.ROOT));
        cache.put(key, engine);
        if (warmUp) {
          EngineWarmup.start(engine);
        }
      }
      return engine;
    }
  }

  /** The engine's kind and device in words, for logs and the plugin's report to the driver. */
  public static String describe(SortEngine engine) {
    SortEngine inner = engine instanceof Shared shared ? shared.engine() : engine;
    if (inner instanceof CudaEngine cuda) {
      return "cuda on " + cuda.deviceDescription();
    }
    if (inner instanceof VulkanEngine vulkan) {
      return "vulkan on " + vulkan.deviceDescription();
    }
    return inner.name() + " (" + Runtime.getRuntime().availableProcessors() + " cores)";
  }

  /**
   * Runs {@code step} on {@code engine} in the background after the engine's own warm-up, once per
   * engine and {@code name}; nothing for an engine that does not warm up (the CPU and Vulkan
   * engines). For the layers above, whose first use the engine's warm-up does not reach (the row
   * path's Java code, compiled by the JIT as it runs). {@link #awaitWarmups} waits for it too.
   */
  public static void warmUpAfter(SortEngine engine, String name, Consumer<SortEngine> step) {
    EngineWarmup.then(engine, name, step);
  }

  /** Background warm-ups still running: for benchmarks that report what a first query found. */
  public static int warmupsRunning() {
    return EngineWarmup.running();
  }

  /**
   * The background warm-ups that ended so far (the engines' own and the steps run after them),
   * in the order they ended: for benchmarks that set a first query beside them.
   */
  public static List<WarmupTime> warmupsEnded() {
    return EngineWarmup.ended();
  }

  /**
   * Waits for the background warm-ups of the engines opened so far (they hold a GPU-task slot and
   * host buffers for a few milliseconds): for tests that count what is in use.
   */
  public static void awaitWarmups() {
    EngineWarmup.awaitAll();
  }

  /**
   * Closes the GPU engines of this process (their device contexts and memory), at executor
   * shutdown; a later request opens them again. Sorts must have finished.
   */
  public static void shutdown() {
    EngineWarmup.awaitAll();
    java.util.List<SortEngine> open = new java.util.ArrayList<>();
    synchronized (Engines.class) {
      open.addAll(CUDA.values());
      open.addAll(VULKAN.values());
      CUDA.clear();
      VULKAN.clear();
    }
    for (SortEngine engine : open) {
      try {
        ((Shared) engine).engine().close();
      } catch (RuntimeException e) {
        LOG.warn("Closing the {} engine failed", engine.name(), e);
      }
    }
  }

  private static synchronized void markVulkanUnusable(String reason) {
    if (vulkanUnusable == null) {
      vulkanUnusable = reason;
      LOG.info("spark.gpusort.engine=auto: no hardware Vulkan device either ({}); sorting on the "
          + "CPU engine", reason);
    }
  }

  private static synchronized void markCudaUnusable(String reason) {
    if (cudaUnusable == null) {
      cudaUnusable = reason;
      LOG.info("spark.gpusort.engine=auto: no CUDA device ({}); trying Vulkan, else the CPU engine",
          reason);
    }
  }

  /**
   * A process-wide engine as handed out: every task shares it, so {@code close()} does nothing
   * (the engine lives as long as the JVM).
   */
  private record Shared(SortEngine engine) implements SortEngine {
    @Override
    public String name() {
      return engine.name();
    }

    @Override
    public void sort(KeyBatch keys, io.gpusort.memory.HostBuffer permutation) {
      engine.sort(keys, permutation);
    }

    @Override
    public void sortRuns(KeyBatch keys, int[] runStarts, io.gpusort.memory.HostBuffer permutation) {
      engine.sortRuns(keys, runStarts, permutation);
    }

    @Override
    public void sortAll(java.util.List<KeyBatch> batches,
        java.util.List<io.gpusort.memory.HostBuffer> permutations) {
      engine.sortAll(batches, permutations);
    }

    @Override
    public boolean gathersRowsOnDevice() {
      return engine.gathersRowsOnDevice();
    }

    @Override
    public boolean gatherRows(RowPages rows, io.gpusort.memory.HostBuffer permutation) {
      return engine.gatherRows(rows, permutation);
    }

    @Override
    public RowUpload openRowUpload() {
      return engine.openRowUpload();
    }

    @Override
    public RowArrival gatherRows(RowPages rows, io.gpusort.memory.HostBuffer permutation,
        RowUpload uploaded) {
      return engine.gatherRows(rows, permutation, uploaded);
    }

    @Override
    public void close() {}
  }

  /** The engine demanded by configuration cannot run here. */
  public static final class EngineUnavailableException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public EngineUnavailableException(String message) {
      super(message);
    }
  }
}
