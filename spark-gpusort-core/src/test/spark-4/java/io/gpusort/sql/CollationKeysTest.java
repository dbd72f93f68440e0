package io.gpusort.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpusort.compat.Collations;
import io.gpusort.keys.KeyKind;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StringType;
import org.junit.jupiter.api.Test;

/** Spark 4's string collations: only binary ones are keys the encoder orders (by bytes). */
class CollationKeysTest {
  @Test
  void onlyBinaryCollationsAreEncoded() {
    assertTrue(Collations.supported());
    assertEquals(KeyKind.BYTES, KeySpec.kindOf(DataTypes.StringType));
    assertEquals(KeyKind.BYTES, KeySpec.kindOf(StringType.apply("UTF8_BINARY")));
    assertNull(KeySpec.kindOf(StringType.apply("UNICODE_CI")));
    assertNull(KeySpec.kindOf(StringType.apply("UTF8_LCASE")));
    assertNull(KeySpec.kindOf(StringType.apply("UTF8_BINARY_RTRIM")));
  }
}
