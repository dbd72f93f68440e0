package io.gpusort.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;

/**
 * The checksums of a sorted output read in pieces (SortBenchmark's file cases read a sorted
 * output file by file): the pieces' checksums put together in order equal the whole's, and in
 * another order they do not.
 */
class OrderChecksumTest {
  @Test
  void piecesInOrderAddUpToTheWhole() {
    SparkSession spark = SharedSpark.get();
    Dataset<Row> sorted = spark.range(0, 3000, 1, 3).selectExpr("id % 700 AS key", "id")
        .orderBy("key", "id");
    List<String> keys = List.of("key");
    OrderChecksum whole = OrderChecksum.of(sorted, keys);
    OrderChecksum low = OrderChecksum.of(sorted.filter("key < 300"), keys);
    OrderChecksum high = OrderChecksum.of(sorted.filter("key >= 300"), keys);
    assertEquals(3000, whole.rows);
    assertNull(OrderChecksum.concat(List.of(low, high)).differenceFrom(whole));
    String swapped = OrderChecksum.concat(List.of(high, low)).differenceFrom(whole);
    assertNotNull(swapped);
    assertEquals("key sequences differ", swapped);
  }
}
