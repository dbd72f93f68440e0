package io.gpusort.sql;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Tag;

/**
 * The same sorts as {@link LargePartitionSpillTest}, on a smaller partition (about 300 MB), with
 * Spark's off-heap memory on ({@code spark.memory.offHeap.enabled}, 32 MiB): the sort takes its
 * memory from the off-heap pool, as Spark's own sorter does, so no task's sort holds more than
 * those 32 MiB, although the on-heap pool of this JVM has about 127 MiB.
 */
@Tag("small-heap")
class OffHeapSpillTest extends LargePartitionSpillTest {
  private static final long OFF_HEAP_BYTES = 32L << 20;

  @Override
  long rows() {
    return 300_000;
  }

  @Override
  void configure(SparkSession.Builder builder) {
    builder.config("spark.memory.offHeap.enabled", "true")
        .config("spark.memory.offHeap.size", String.valueOf(OFF_HEAP_BYTES));
  }

  @Override
  void checkPeak(String name, long peakBytes) {
    // The metric sums the peaks of a sort's tasks: one task within partitions, at most three
    // (one map side, two reduce sides) for the global sorts.
    long tasks = name.contains("ithin") ? 1 : 3;
    assertTrue(peakBytes <= tasks * OFF_HEAP_BYTES, name + ": peak " + peakBytes
        + " bytes over " + tasks + " x the off-heap pool");
    assertTrue(peakBytes > 0, name + ": no peak memory reported");
  }
}
