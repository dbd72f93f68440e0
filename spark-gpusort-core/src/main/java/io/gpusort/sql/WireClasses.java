package io.gpusort.sql;

import java.util.List;

/**
 * The classes of the SQL operator whose objects Spark's serializer (Kryo, where configured)
 * writes: the range-boundary samples that tasks return to the driver. Closures (the sort plan,
 * the bounds) go through Java serialization, whatever the serializer.
 */
public final class WireClasses {
  private WireClasses() {}

  public static List<Class<?>> all() {
    return List.of(RangeBounds.PartitionSample.class, RangeBounds.Point.class,
        RangeBounds.Point[].class, RangeBounds.class);
  }
}
