package io.gpusort.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpusort.compat.ScalaCollections;
import io.gpusort.config.GpuSortConf;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.SplittableRandom;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.serializer.SerializationStream;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import scala.Tuple2;
import scala.reflect.ClassTag$;

/**
 * The merge mode's two sides run as Spark tasks without the shuffle between them, so that the
 * test decides the order in which a reducer receives its blocks: each input partition sorted and
 * cut into chunks by the map side, every chunk serialized as the shuffle would write it; then each
 * output partition's blocks fed to the reduce side as produced, reversed and shuffled, merged on
 * the host (the CPU engine's way) and sorted on the engine (a GPU engine's way). Every order gives
 * the same rows in Spark's order, the output partitions cover the input once and in order, and
 * an input partition's rows sit in one block per output partition, in key order. Keys: a long
 * with nulls and many ties (exact keys: cut by binary search), and a string sharing a prefix longer
 * than the encoded one (truncated keys: cut row by row, ties broken on the rows).
 */
class MergeChunksTest {
  private static final int INPUT_PARTITIONS = 4;
  private static final int ROWS = 3000;
  private static final int OUTPUT_PARTITIONS = 5;

  /** The test's sort: key {@code k} (a long or a string), a string payload. */
  private static final class Sort implements Serializable {
    private static final long serialVersionUID = 1L;
    final boolean stringKey;
    final SortPlan plan;
    final StructType schema;

    Sort(boolean stringKey) {
      this.stringKey = stringKey;
      AttributeReference key = RowKeyEncoderTest.attribute("k",
          stringKey ? DataTypes.StringType : DataTypes.LongType, true);
      AttributeReference payload = RowKeyEncoderTest.attribute("s", DataTypes.StringType, false);
      schema = new StructType(new StructField[] {
          new StructField("k", key.dataType(), true, Metadata.empty()),
          new StructField("s", DataTypes.StringType, false, Metadata.empty())});
      KeySpec spec = KeySpec.of(List.of(RowKeyEncoderTest.sortOrder(key, false, true)),
          ScalaCollections.list(List.<Attribute>of(key, payload)), 4);
      // Small pages and runs: rows spill into several runs on each side.
      plan = new SortPlan(spec, schema, GpuSortConf.of(Map.of("spark.gpusort.engine", "cpu",
          "spark.gpusort.chunk.maxBytes", "16k", "spark.gpusort.run.maxBytes", "64k")),
          OUTPUT_PARTITIONS, 64L << 20);
    }

    /** Input partition {@code p}, the same wherever it is made. */
    List<UnsafeRow> rows(int p) {
      UnsafeProjection toUnsafe = UnsafeProjection.create(schema);
      SplittableRandom random = new SplittableRandom(1000 + p);
      List<UnsafeRow> rows = new ArrayList<>();
      for (int i = 0; i < ROWS; i++) {
        Object key = null;
        if (random.nextInt(25) != 0) {
          long k = random.nextInt(3) == 0 ? random.nextLong() : random.nextInt(40);
          key = stringKey ? UTF8String.fromString("shared-prefix-" + k) : (Object) k;
        }
        String payload = p + ":" + i + "-" + "p".repeat(random.nextInt(30));
        rows.add(toUnsafe.apply(new GenericInternalRow(
            new Object[] {key, UTF8String.fromString(payload)})).copy());
      }
      return rows;
    }

    RangeBounds bounds() {
      RowKeys keys = new RowKeys(plan);
      List<RangeBounds.PartitionSample> samples = new ArrayList<>();
      for (int p = 0; p < INPUT_PARTITIONS; p++) {
        samples.add(RangeBounds.sample(new ArrayList<InternalRow>(rows(p)).iterator(), p, 300,
            keys, null));
      }
      return RangeBounds.choose(samples, OUTPUT_PARTITIONS, keys.exact, keys.ordering);
    }
  }

  @ParameterizedTest(name = "string key: {0}")
  @ValueSource(booleans = {false, true})
  void blocksInAnyOrderMergeIntoSparksOrder(boolean stringKey) {
    Sort sort = new Sort(stringKey);
    RangeBounds bounds = sort.bounds();
    assertEquals(OUTPUT_PARTITIONS, bounds.numPartitions());
    JavaSparkContext sc = JavaSparkContext.fromSparkContext(SparkTestSession.get().sparkContext());
    List<Integer> inputs = new ArrayList<>();
    for (int p = 0; p < INPUT_PARTITIONS; p++) {
      inputs.add(p);
    }
    // Map side: (output partition, input partition, one serialized chunk) in the order made.
    List<Tuple2<Integer, Tuple2<Integer, byte[]>>> chunks = sc.parallelize(inputs, INPUT_PARTITIONS)
        .mapPartitions(ps -> {
          int p = ps.next();
          List<InternalRow> input = new ArrayList<>(sort.rows(p));
          Iterator<Tuple2<Integer, RowChunk>> cut =
              ExternalRowSorter.sortIntoChunksInTask(sort.plan, input.iterator(), bounds, p);
          List<Tuple2<Integer, Tuple2<Integer, byte[]>>> out = new ArrayList<>();
          while (cut.hasNext()) {
            Tuple2<Integer, RowChunk> c = cut.next();
            out.add(new Tuple2<>(c._1(), new Tuple2<>(p, serialize(c._2()))));
          }
          return out.iterator();
        }).collect();

    RowKeys keys = new RowKeys(sort.plan);
    List<UnsafeRow> all = new ArrayList<>();
    for (int p = 0; p < INPUT_PARTITIONS; p++) {
      all.addAll(sort.rows(p));
    }
    // An input partition's chunks for one output partition come one after another, in order.
    int lastTarget = -1;
    int lastInput = -1;
    for (Tuple2<Integer, Tuple2<Integer, byte[]>> c : chunks) {
      if (c._2()._1() == lastInput) {
        assertTrue(c._1() >= lastTarget, "input " + lastInput + ": partition " + c._1()
            + " after " + lastTarget);
      }
      lastInput = c._2()._1();
      lastTarget = c._1();
    }

    List<UnsafeRow> merged = new ArrayList<>();
    for (int t = 0; t < OUTPUT_PARTITIONS; t++) {
      List<byte[]> blocks = new ArrayList<>();
      for (Tuple2<Integer, Tuple2<Integer, byte[]>> c : chunks) {
        if (c._1() == t) {
          blocks.add(c._2()._2());
        }
      }
      List<byte[]> reversed = new ArrayList<>(blocks);
      Collections.reverse(reversed);
      List<byte[]> shuffled = new ArrayList<>(blocks);
      Collections.shuffle(shuffled, new Random(t));
      List<UnsafeRow> first = null;
      for (List<byte[]> order : List.of(blocks, reversed, shuffled)) {
        for (boolean presorted : new boolean[] {true, false}) {
          List<UnsafeRow> rows = reduce(sc, sort, order, presorted);
          String what = "output partition " + t + (presorted ? ", merged" : ", sorted");
          for (int i = 1; i < rows.size(); i++) {
            assertTrue(keys.ordering.compare(rows.get(i - 1), rows.get(i)) <= 0,
                what + ": rows " + (i - 1) + " and " + i + " out of order");
          }
          if (first == null) {
            first = rows;
          } else {
            assertEquals(multiset(first), multiset(rows), what + ": other rows");
          }
        }
      }
      if (!merged.isEmpty() && !first.isEmpty()) {
        assertTrue(keys.ordering.compare(merged.get(merged.size() - 1), first.get(0)) <= 0,
            "output partition " + t + " starts before the one before ends");
      }
      merged.addAll(first);
    }
    assertEquals(multiset(all), multiset(merged), "the output partitions hold the input once");
  }

  private static byte[] serialize(RowChunk chunk) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    SerializationStream out = new RowChunkSerializer().newInstance().serializeStream(bytes);
    out.writeValue(chunk, ClassTag$.MODULE$.Any());
    out.close();
    return bytes.toByteArray();
  }

  /** One reduce task over {@code blocks}, in that order; its rows copied. */
  private static List<UnsafeRow> reduce(JavaSparkContext sc, Sort sort, List<byte[]> blocks,
      boolean presorted) {
    return sc.parallelize(List.of(0), 1).mapPartitions(ignored -> {
      ByteArrayOutputStream stream = new ByteArrayOutputStream();
      for (byte[] block : blocks) {
        stream.write(block);
      }
      RowChunkSerializer.Reader reader =
          new RowChunkSerializer.Reader(new ByteArrayInputStream(stream.toByteArray()));
      Iterator<RowChunk> chunks = new Iterator<>() {
        private RowChunk next = reader.next();

        @Override
        public boolean hasNext() {
          return next != null;
        }

        @Override
        public RowChunk next() {
          RowChunk chunk = next;
          next = reader.next();
          return chunk;
        }
      };
      Iterator<InternalRow> sorted = ExternalRowSorter.sortChunksInTask(sort.plan, chunks,
          presorted);
      List<UnsafeRow> out = new ArrayList<>();
      while (sorted.hasNext()) {
        out.add(((UnsafeRow) sorted.next()).copy());
      }
      return out.iterator();
    }).collect();
  }

  private static Map<String, Integer> multiset(List<UnsafeRow> rows) {
    Map<String, Integer> counts = new java.util.HashMap<>();
    for (UnsafeRow row : rows) {
      counts.merge(java.util.Arrays.toString(row.getBytes()), 1, Integer::sum);
    }
    return counts;
  }
}
