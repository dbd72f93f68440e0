package io.gpusort.compat;

import java.util.Collection;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Scala collections to and from Java's, for Scala 2.13, where Spark's {@code Seq} is
 * {@code scala.collection.immutable.Seq}. The class for Scala 2.12 (whose {@code Seq} is
 * {@code scala.collection.Seq}, with no {@code scala.jdk.javaapi}) lives in
 * {@code src/main/scala-2.12} with the same methods. They convert plans' and settings' lists, not
 * rows: nothing here is on a per-row path.
 */
public final class ScalaCollections {
  private ScalaCollections() {}

  /** A Java view of {@code seq}. */
  public static <T> java.util.List<T> asJava(scala.collection.Seq<T> seq) {
    return CollectionConverters.asJava(seq);
  }

  /** A Java view of {@code map}. */
  public static <K, V> java.util.Map<K, V> asJava(scala.collection.Map<K, V> map) {
    return CollectionConverters.asJava(map);
  }

  /** A Java view of {@code iterator}. */
  public static <T> java.util.Iterator<T> asJava(scala.collection.Iterator<T> iterator) {
    return CollectionConverters.asJava(iterator);
  }

  /** A Scala view of {@code iterator}. */
  public static <T> scala.collection.Iterator<T> asScala(java.util.Iterator<T> iterator) {
    return CollectionConverters.asScala(iterator);
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
    return scala.collection.immutable.Map.from(CollectionConverters.asScala(map));
  }

  /** {@code seq} as the immutable {@code Seq} Spark's plans hold: on Scala 2.13, itself. */
  public static <T> scala.collection.immutable.Seq<T> immutable(
      scala.collection.immutable.Seq<T> seq) {
    return seq;
  }
}
