package io.gpusort.keys;

import java.io.Serializable;

/**
 * One sort column as the engine sees it: its kind, direction, where nulls go, and whether a null
 * flag is needed at all (a column the schema declares non-nullable needs none).
 */
public record KeyField(KeyKind kind, boolean descending, boolean nullsFirst, boolean nullable,
    int prefixBytes) implements Serializable {

  public KeyField {
    if (kind == KeyKind.BYTES && prefixBytes < 1) {
      throw new IllegalArgumentException("a bytes key needs a prefix of at least one byte");
    }
  }

  public static KeyField fixed(KeyKind kind, boolean descending, boolean nullsFirst,
      boolean nullable) {
    return new KeyField(kind, descending, nullsFirst, nullable, 0);
  }

  /** Bits of the value, without the null flag. */
  public int valueBits() {
    return kind.isFixedWidth() ? kind.fixedBits() : 8 * prefixBytes;
  }

  /** Bits in the key: the value's plus one for the null flag when the column is nullable. */
  public int totalBits() {
    return valueBits() + (nullable ? 1 : 0);
  }

  /** Whether equal encodings may hide different values, so that ties need an exact comparison. */
  public boolean isTruncated() {
    return !kind.isFixedWidth();
  }
}
