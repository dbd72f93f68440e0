package io.gpusort.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.apache.spark.SparkConf;
import org.apache.spark.memory.TaskMemoryManager;
import org.apache.spark.memory.UnifiedMemoryManager;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A task's sort memory for each test (1 GiB, half of it for execution), registered with
 * {@code @RegisterExtension}; after the test, nothing may still be counted in it.
 */
final class TaskMemory implements BeforeEachCallback, AfterEachCallback {
  private SortMemory memory;

  /** The current test's memory. */
  SortMemory get() {
    return memory;
  }

  @Override
  public void beforeEach(ExtensionContext context) {
    UnifiedMemoryManager manager = new UnifiedMemoryManager(new SparkConf(), 1L << 30, 1L << 29, 1);
    memory = new SortMemory(new TaskMemoryManager(manager, 0));
  }

  @Override
  public void afterEach(ExtensionContext context) {
    assertEquals(0, memory.getUsed(), "task memory still counted");
  }
}
