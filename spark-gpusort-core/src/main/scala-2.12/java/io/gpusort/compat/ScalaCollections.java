package io.gpusort.compat;

import java.util.Collection;
import scala.collection.JavaConverters;

/**
 * Scala collections to and from Java's, for Scala 2.12, where Spark's {@code Seq} is
 * {@code scala.collection.Seq} and there is no {@code scala.jdk.javaapi}. The class for Scala
 * 2.13 lives in {@code src/main/scala-2.13} with the same methods. They convert plans' and
 * settings' lists, not rows: nothing here is on a per-row path.
 */
public final class ScalaCollections {
  private ScalaCollections() {}

  /** A Java view of {@code seq}. */
  public static <T> java.util.List<T> asJava(scala.collection.Seq<T> seq) {
    return JavaConverters.seqAsJavaList(seq);
  }

  /** A Java view of {@code map}. */
  public static <K, V> java.util.Map<K, V> asJava(scala.collection.Map<K, V> map) {
    return JavaConverters.mapAsJavaMap(map);
  }

  /** A Java view of {@code iterator}. */
  public static <T> java.util.Iterator<T> asJava(scala.collection.Iterator<T> iterator) {
    return JavaConverters.asJavaIterator(iterator);
  }

  /** A Scala view of {@code iterator}. */
  public static <T> scala.collection.Iterator<T> asScala(java.util.Iterator<T> iterator) {
    return JavaConverters.asScalaIterator(iterator);
  }

  /** An immutable Scala list of {@code values}: a {@code Seq} to every Spark API on both Scalas. */
  public static <T> scala.collection.immutable.List<T> list(Collection<? extends T> values) {
    scala.collection.mutable.ListBuffer<T> buffer = new scala.collection.mutable.ListBuffer<>();
    for (T value : values) {
      buffer.$plus$eq(value);
    }
    return buffer.toList();
  }

  /** An immutable Scala map of {@code map}'s entries. */
  public static <K, V> scala.collection.immutable.Map<K, V> map(java.util.Map<K, V> map) {
    scala.collection.immutable.Map<K, V> result = scala.collection.immutable.Map$.MODULE$.empty();
    for (java.util.Map.Entry<K, V> entry : map.entrySet()) {
      result = result.$plus(new scala.Tuple2<>(entry.getKey(), entry.getValue()));
    }
    return result;
  }

  /** {@code seq} as an immutable {@code Seq}: itself where it is one, else a list of it. */
  public static <T> scala.collection.immutable.Seq<T> immutable(scala.collection.Seq<T> seq) {
    return seq instanceof scala.collection.immutable.Seq<T> immutable ? immutable : seq.toList();
  }
}
