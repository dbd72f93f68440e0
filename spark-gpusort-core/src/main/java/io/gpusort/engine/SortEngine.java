package io.gpusort.engine;

import io.gpusort.memory.HostBuffer;

/**
 * Sorts encoded keys. The one operation every engine (CPU, CUDA, Vulkan) implements, and the one
 * every test runs against each of them.
 */
public interface SortEngine extends AutoCloseable {
  /** A short name for logs and metrics: {@code cpu}, {@code cuda}, {@code vulkan}. */
  String name();

  /**
   * Writes into {@code permutation} (at least {@code 4 * keys.numRows()} bytes, one 32-bit int per
   * row) the row indices of {@code keys} in ascending key order, comparing keys as unsigned
   * big-endian numbers. The sort is stable: rows with equal keys keep ascending index order.
   *
   * @throws EngineException if the engine fails; the caller may retry on another engine
   */
  void sort(KeyBatch keys, HostBuffer permutation);

  @Override
  default void close() {}
}
