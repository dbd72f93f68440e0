package io.gpusort.spark;

import com.esotericsoftware.kryo.Kryo;
import io.gpusort.sql.WireClasses;
import java.util.ArrayList;
import org.apache.spark.serializer.KryoRegistrator;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;

/**
 * Registers every class of the plugin that crosses the wire through Spark's serializer, for
 * {@code spark.kryo.registrator=io.gpusort.spark.GpuSortKryoRegistrator}: jobs run with {@code
 * spark.kryo.registrationRequired=true}. The engine report an executor sends the driver goes
 * through Spark's RPC, which serializes with Java serialization, not Kryo.
 */
public final class GpuSortKryoRegistrator implements KryoRegistrator {
  @Override
  public void registerClasses(Kryo kryo) {
    for (Class<?> c : WireClasses.all()) {
      kryo.register(c);
    }
    // What the samples hold: their list, the boundary rows, the key words.
    kryo.register(ArrayList.class);
    kryo.register(UnsafeRow.class);
    kryo.register(long[].class);
  }
}
