package io.gpusort.sql;

import io.gpusort.keys.KeyLayout;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.catalyst.expressions.codegen.LazilyGeneratedOrdering;

/**
 * What one task needs to read the rows of a sort: rows as {@link UnsafeRow}, their encoded keys,
 * and Spark's exact ordering for rows whose truncated keys tie. Not thread-safe: one per task.
 */
final class RowKeys {
  final KeyLayout layout;
  final int numWords;
  /** Whether equal encoded keys still need Spark's exact comparison (truncated strings). */
  final boolean exact;
  final RowKeyEncoder encoder;
  final LazilyGeneratedOrdering ordering;
  /**
   * Whether a global sort's map side sends the encoded keys with the rows: only where
   * {@code global.sendKeys} is on (off by default) and a key column is a string or binary, whose
   * encoding reads the value again. On the H200 the reducer's encoding from the rows took less
   * time than the keys' bytes cost the shuffle, for strings as for fixed-width keys.
   */
  final boolean shipsKeys;
  private final UnsafeProjection toUnsafe;

  RowKeys(SortPlan plan) {
    this.layout = plan.keys.layout;
    this.numWords = layout.numWords();
    this.exact = layout.needsTieBreak();
    this.encoder = new RowKeyEncoder(plan.keys);
    this.ordering = new LazilyGeneratedOrdering(plan.keys.boundOrders);
    boolean variable = false;
    for (int i = 0; i < layout.numFields(); i++) {
      variable |= !layout.field(i).kind().isFixedWidth();
    }
    this.shipsKeys = variable && plan.sendKeys;
    this.toUnsafe = UnsafeProjection.create(plan.inputSchema);
  }

  /** {@code row} itself when it is an {@link UnsafeRow}, else its projection (reused). */
  UnsafeRow asUnsafe(InternalRow row) {
    return row instanceof UnsafeRow unsafe ? unsafe : toUnsafe.apply(row);
  }
}
