package io.gpusort.keys;

/**
 * The kinds of key value the engines sort, each with the number of bits its order-preserving
 * encoding takes. Variable-width kinds are encoded by a prefix whose length is chosen per layout.
 */
public enum KeyKind {
  /** A column whose every value is null: only its null flag orders it. */
  NULL(0),
  BOOLEAN(1),
  BYTE(8),
  SHORT(16),
  /** int, and date (days since the epoch). */
  INT(32),
  /** long, timestamp and timestamp_ntz (microseconds), decimals of at most 18 digits (unscaled). */
  LONG(64),
  FLOAT(32),
  DOUBLE(64),
  /** Decimals of 19 to 38 digits: the unscaled value as a 128-bit two's complement number. */
  INT128(128),
  /** UTF-8 strings (binary collation) and binaries: unsigned bytes, by a prefix. */
  BYTES(-1);

  private final int fixedBits;

  KeyKind(int fixedBits) {
    this.fixedBits = fixedBits;
  }

  public boolean isFixedWidth() {
    return fixedBits >= 0;
  }

  /** Bits of the value's encoding; only for fixed-width kinds. */
  public int fixedBits() {
    if (fixedBits < 0) {
      throw new IllegalStateException(this + " has no fixed width");
    }
    return fixedBits;
  }
}
