package io.gpusort.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.gpusort.compat.Collations;
import io.gpusort.keys.KeyKind;
import org.apache.spark.sql.types.DataTypes;
import org.junit.jupiter.api.Test;

/** Spark 3.5 has no string collations: every string is a key ordered by its bytes. */
class CollationKeysTest {
  @Test
  void everyStringIsEncodedByBytes() {
    assertFalse(Collations.supported());
    assertEquals(KeyKind.BYTES, KeySpec.kindOf(DataTypes.StringType));
  }
}
