package io.gpusort.keys;

import java.io.Serializable;
import java.util.List;

/**
 * How the sort columns of one sort are packed into a key of 64-bit words: the fields one after the
 * other, most significant first, each as an optional null flag followed by its value bits, with no
 * padding between fields and zeros after the last.
 *
 * <p>Only the columns up to and including the first truncated one (a string or binary prefix) are
 * encoded: a column after a truncated one would order rows whose prefixes tie but whose full
 * values differ. Keys that are equal in such a layout are ordered exactly on the host
 * ({@link #needsTieBreak()}).
 */
public final class KeyLayout implements Serializable {
  private static final long serialVersionUID = 1L;

  private final KeyField[] fields;
  private final int[] bitOffsets;
  private final int keyBits;
  private final boolean needsTieBreak;

  /**
   * @param sortFields every sort column, in sort order; the layout keeps those it can encode
   */
  public KeyLayout(List<KeyField> sortFields) {
    int kept = 0;
    boolean truncated = false;
    while (kept < sortFields.size() && !truncated) {
      truncated = sortFields.get(kept).isTruncated();
      kept++;
    }
    this.fields = sortFields.subList(0, kept).toArray(new KeyField[0]);
    this.bitOffsets = new int[kept];
    int bits = 0;
    for (int i = 0; i < kept; i++) {
      bitOffsets[i] = bits;
      bits += fields[i].totalBits();
    }
    this.keyBits = bits;
    this.needsTieBreak = truncated;
  }

  /** The encoded fields: a prefix of the sort columns. */
  public int numFields() {
    return fields.length;
  }

  public KeyField field(int i) {
    return fields[i];
  }

  /** The bit at which field {@code i} starts, counted from the most significant bit of word 0. */
  public int bitOffset(int i) {
    return bitOffsets[i];
  }

  public int keyBits() {
    return keyBits;
  }

  /** Words per key; at least one, so that an empty key (no columns) still has a shape. */
  public int numWords() {
    return Math.max(1, (keyBits + 63) >>> 6);
  }

  /** Whether rows with equal keys may still differ in Spark's order (a truncated field). */
  public boolean needsTieBreak() {
    return needsTieBreak;
  }

  /**
   * ORs the low {@code width} bits of {@code value} into {@code words} starting at bit {@code pos}
   * (0 is the most significant bit of word 0); bits of {@code value} above {@code width} are
   * ignored. The target bits must be zero.
   */
  public static void putBits(long[] words, int pos, int width, long value) {
    if (width == 0) {
      return;
    }
    value &= mask(width);
    int w = pos >>> 6;
    int free = 64 - (pos & 63);
    if (width <= free) {
      words[w] |= value << (free - width);
    } else {
      int spill = width - free;
      words[w] |= value >>> spill;
      words[w + 1] |= value << (64 - spill);
    }
  }

  /** The low {@code width} bits set. */
  public static long mask(int width) {
    return width == 64 ? -1L : (1L << width) - 1;
  }
}
