package io.gpusort.sql;

import io.gpusort.compat.Collations;
import io.gpusort.compat.ScalaCollections;
import io.gpusort.keys.KeyField;
import io.gpusort.keys.KeyKind;
import io.gpusort.keys.KeyLayout;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.BindReferences;
import org.apache.spark.sql.catalyst.expressions.BoundReference;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.NullsFirst$;
import org.apache.spark.sql.catalyst.expressions.SortOrder;
import org.apache.spark.sql.catalyst.expressions.package$;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.NullType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.TimestampNTZType;
import org.apache.spark.sql.types.TimestampType;

/**
 * Everything an executor needs to encode and order the rows of one sort, built on the driver from
 * the resolved sort orders: the key layout, where each encoded field is read from, and the sort
 * orders bound to the input row for exact tie-breaking.
 */
final class KeySpec implements Serializable {
  private static final long serialVersionUID = 1L;

  /** The sort orders bound to the input row's ordinals. */
  final scala.collection.immutable.Seq<SortOrder> boundOrders;
  final KeyLayout layout;
  /** Per encoded field: its ordinal in the input row, or in the projected key row. */
  final int[] ordinals;
  /** The key expressions to project first, or null when every key is an input column. */
  final scala.collection.immutable.Seq<Expression> keyProjection;

  private KeySpec(scala.collection.immutable.Seq<SortOrder> boundOrders, KeyLayout layout,
      int[] ordinals, scala.collection.immutable.Seq<Expression> keyProjection) {
    this.boundOrders = boundOrders;
    this.layout = layout;
    this.ordinals = ordinals;
    this.keyProjection = keyProjection;
  }

  /**
   * Builds the spec for sorting rows of {@code input} by {@code orders}.
   *
   * @throws UnsupportedKeyException when a key's type cannot be encoded
   */
  static KeySpec of(List<SortOrder> orders, scala.collection.immutable.Seq<Attribute> input,
      int stringPrefixBytes) {
    List<KeyField> fields = new ArrayList<>();
    for (SortOrder order : orders) {
      fields.add(fieldOf(order, stringPrefixBytes));
    }
    KeyLayout layout = new KeyLayout(fields);

    List<SortOrder> bound = new ArrayList<>();
    for (SortOrder order : orders) {
      bound.add(BindReferences.bindReference(order, package$.MODULE$.AttributeSeq(input), false));
    }
    int[] ordinals = new int[layout.numFields()];
    boolean direct = true;
    List<Expression> keys = new ArrayList<>();
    for (int i = 0; i < layout.numFields(); i++) {
      Expression child = bound.get(i).child();
      keys.add(child);
      if (child instanceof BoundReference ref) {
        ordinals[i] = ref.ordinal();
      } else {
        direct = false;
      }
    }
    if (!direct) {
      for (int i = 0; i < ordinals.length; i++) {
        ordinals[i] = i;
      }
    }
    return new KeySpec(ScalaCollections.list(bound), layout, ordinals,
        direct ? null : ScalaCollections.list(keys));
  }

  /** Throws {@link UnsupportedKeyException} unless every order has an encodable type. */
  static void checkSupported(List<SortOrder> orders) {
    for (SortOrder order : orders) {
      fieldOf(order, 1);
    }
  }

  private static KeyField fieldOf(SortOrder order, int stringPrefixBytes) {
    Expression child = order.child();
    KeyKind kind = kindOf(child.dataType());
    if (kind == null) {
      throw new UnsupportedKeyException("sort key " + child.sql() + " has type "
          + child.dataType().sql() + ", which no engine can encode");
    }
    boolean descending = !order.isAscending();
    boolean nullsFirst = order.nullOrdering() == NullsFirst$.MODULE$;
    boolean nullable = child.nullable() || kind == KeyKind.NULL;
    return new KeyField(kind, descending, nullsFirst, nullable,
        kind == KeyKind.BYTES ? stringPrefixBytes : 0);
  }

  /** The key kind of a Spark type, or null when no engine can encode it. */
  static KeyKind kindOf(DataType type) {
    if (type instanceof BooleanType) {
      return KeyKind.BOOLEAN;
    } else if (type instanceof ByteType) {
      return KeyKind.BYTE;
    } else if (type instanceof ShortType) {
      return KeyKind.SHORT;
    } else if (type instanceof IntegerType || type instanceof DateType) {
      return KeyKind.INT;
    } else if (type instanceof LongType || type instanceof TimestampType
        || type instanceof TimestampNTZType) {
      return KeyKind.LONG;
    } else if (type instanceof FloatType) {
      return KeyKind.FLOAT;
    } else if (type instanceof DoubleType) {
      return KeyKind.DOUBLE;
    } else if (type instanceof DecimalType decimal) {
      return decimal.precision() <= 18 ? KeyKind.LONG : KeyKind.INT128;
    } else if (type instanceof StringType string) {
      // Only binary collations (the default UTF8_BINARY) order by bytes; Spark 3.5 has no others.
      return Collations.ordersByBytes(string) ? KeyKind.BYTES : null;
    } else if (type instanceof BinaryType) {
      return KeyKind.BYTES;
    } else if (type instanceof NullType) {
      return KeyKind.NULL;
    }
    return null;
  }
}
