package io.gpusort.engine.cpu;

import static io.gpusort.engine.cpu.RadixKernels.DIGIT_BITS;
import static io.gpusort.engine.cpu.RadixKernels.RADIX;

import io.gpusort.engine.KeyBatch;

/**
 * The passes of one LSD radix sort: words from least to most significant, and within a word one
 * stable scatter pass per active digit (see {@link DigitHistograms#activeDigits}), least
 * significant first.
 *
 * <p>What moves between passes takes one of these forms (see {@link ScatterKernels}):
 * <ul>
 *   <li>the first pass of the sort reads the caller's word column in input order;
 *   <li>a later word is gathered once, in the current row order, from its column;
 *   <li>(key word, row index) pairs move together while the digits still to sort on and the row
 *       index do not fit in one long, and as one packed long as soon as they do, which halves the
 *       write streams and moves 8 bytes a row instead of 12;
 *   <li>the last pass of a word writes row indices alone, since the next word is gathered afresh.
 * </ul>
 */
final class LsdRadixPasses {
  private enum Form { NONE, COLUMN, KEYS, PACKED, ROWS }

  private final KeyBatch keys;
  private final DigitHistograms histograms;
  private final RangeRunner runner;
  private final Workspace workspace;
  private final int numRanges;
  /** Bits a row index needs: rows are below {@code 2^rowBits}. */
  private final int rowBits;
  /** Per-range counts of the digit of the coming pass, when counted in a parallel step. */
  private final int[][] rangeDigitCounts;
  /** Per-range write cursors of the current pass. */
  private final int[][] cursors;

  private Form form = Form.NONE;
  /** COLUMN: the off-heap address of the word column. */
  private long column;
  /** KEYS: the key words; PACKED: the packed values. */
  private long[] values;
  /** KEYS and ROWS: the row indices in the current order. */
  private int[] rows;
  /** PACKED: the digit of the word that sits right above the row index. */
  private int packedBaseDigit;

  LsdRadixPasses(KeyBatch keys, DigitHistograms histograms, RangeRunner runner,
      Workspace workspace) {
    this.keys = keys;
    this.histograms = histograms;
    this.runner = runner;
    this.workspace = workspace;
    this.numRanges = runner.ranges().count();
    this.rowBits = Math.max(1, Integer.SIZE - Integer.numberOfLeadingZeros(keys.numRows() - 1));
    this.rangeDigitCounts = new int[numRanges][RADIX];
    this.cursors = new int[numRanges][RADIX];
  }

  /**
   * Runs every pass and returns the row indices in sorted order, or null if no digit needs a
   * pass: then the identity is the answer.
   */
  int[] run() {
    int numWords = keys.numWords();
    int[][] activeDigits = new int[numWords][];
    int lastWord = -1;
    for (int w = numWords - 1; w >= 0; w--) {
      activeDigits[w] = histograms.activeDigits(w);
      if (activeDigits[w].length > 0) {
        lastWord = w;
      }
    }
    if (lastWord < 0) {
      return null;
    }
    for (int w = numWords - 1; w >= lastWord; w--) {
      if (activeDigits[w].length > 0) {
        sortWord(w, activeDigits[w]);
      }
    }
    return rows;
  }

  private void sortWord(int word, int[] digits) {
    loadWord(keys.words().address() + keys.columnOffset(word), digits);
    for (int j = 0; j < digits.length; j++) {
      int shift = shiftOf(digits[j]);
      prepareCursors(word, digits[j], shift, j == 0);
      if (j == digits.length - 1) {
        scatterToRows(shift);
      } else if (form != Form.PACKED && fitsPacked(digits, j + 1)) {
        scatterToPacked(shift, digits[j + 1]);
      } else {
        scatterToSameForm(shift);
      }
    }
  }

  /** Whether digits {@code digits[from..]} of a word and a row index fit in one long. */
  private boolean fitsPacked(int[] digits, int from) {
    int spanBits = (digits[digits.length - 1] - digits[from] + 1) * DIGIT_BITS;
    return spanBits + rowBits <= Long.SIZE;
  }

  /** Where digit {@code digit} of the current word sits in the current form. */
  private int shiftOf(int digit) {
    return form == Form.PACKED
        ? rowBits + (digit - packedBaseDigit) * DIGIT_BITS
        : digit * DIGIT_BITS;
  }

  /**
   * Makes the word column at {@code wordColumn} the source of the word's first pass: the column itself for
   * the first word of the sort, else its words gathered in the current row order, packed if all
   * its active digits fit. With several ranges the gather also counts the first pass's digit.
   */
  private void loadWord(long wordColumn, int[] digits) {
    if (form == Form.NONE) {
      form = Form.COLUMN;
      column = wordColumn;
      return;
    }
    int[] srcRows = rows;
    long[] dst = workspace.valuesOtherThan(null);
    if (fitsPacked(digits, 0)) {
      int packShift = digits[0] * DIGIT_BITS;
      int shift = rowBits;
      runner.forEachRange("gather", (range, startRow, endRow) -> RadixKernels.gatherPacked(
          wordColumn, srcRows, dst, startRow, endRow, packShift, rowBits, shift,
          countsFor(range)));
      form = Form.PACKED;
      packedBaseDigit = digits[0];
      rows = null;
    } else {
      int shift = digits[0] * DIGIT_BITS;
      runner.forEachRange("gather", (range, startRow, endRow) -> RadixKernels.gatherKeys(
          wordColumn, srcRows, dst, startRow, endRow, shift, countsFor(range)));
      form = Form.KEYS;
    }
    values = dst;
  }

  /** Where a parallel gather counts the first digit; null when one range needs no counting. */
  private int[] countsFor(int range) {
    return numRanges > 1 ? rangeDigitCounts[range] : null;
  }

  /**
   * Fills {@link #cursors} for the pass on digit {@code digit} of word {@code word}. With one
   * range the whole-input histogram is exact for every pass; with several, the per-range counts
   * come from the upfront histogram (column in input order), from the gather (first pass of a
   * later word) or from a counting step over the current values.
   */
  private void prepareCursors(int word, int digit, int shift, boolean firstPassOfWord) {
    if (numRanges == 1) {
      RadixKernels.countsToOffsets(new int[][] {histograms.totals(word)}, digit * RADIX, cursors);
    } else if (form == Form.COLUMN) {
      RadixKernels.countsToOffsets(histograms.rangeCounts(word), digit * RADIX, cursors);
    } else {
      if (!firstPassOfWord) {
        long[] src = values;
        runner.forEachRange("count", (range, startRow, endRow) ->
            RadixKernels.countDigit(src, startRow, endRow, shift, rangeDigitCounts[range]));
      }
      RadixKernels.countsToOffsets(rangeDigitCounts, 0, cursors);
    }
  }

  /**
   * The last pass of a word: only the row order is kept. Its source is the column (a first word
   * with one active digit) or packed values: one digit and a row index always fit in a long, so an
   * earlier pass or the gather has packed them.
   */
  private void scatterToRows(int shift) {
    Form source = form;
    if (source != Form.COLUMN && source != Form.PACKED) {
      throw new IllegalStateException("last pass of a word from form " + source);
    }
    long srcColumn = column;
    long[] src = values;
    int[] dst = workspace.rowsOtherThan(rows);
    runner.forEachRange("scatter", (range, startRow, endRow) -> {
      if (source == Form.COLUMN) {
        ScatterKernels.columnToRows(srcColumn, dst, startRow, endRow, shift, cursors[range]);
      } else {
        ScatterKernels.packedToRows(src, dst, startRow, endRow, shift, rowBits, cursors[range]);
      }
    });
    form = Form.ROWS;
    values = null;
    rows = dst;
  }

  /** A pass that also packs the digits from {@code nextDigit} up with the row index. */
  private void scatterToPacked(int shift, int nextDigit) {
    Form source = form;
    long srcColumn = column;
    long[] src = values;
    int[] srcRows = rows;
    long[] dst = workspace.valuesOtherThan(src);
    int packShift = nextDigit * DIGIT_BITS;
    runner.forEachRange("scatter", (range, startRow, endRow) -> {
      if (source == Form.COLUMN) {
        ScatterKernels.columnToPacked(srcColumn, dst, startRow, endRow, shift, packShift, rowBits,
            cursors[range]);
      } else {
        ScatterKernels.keysToPacked(src, srcRows, dst, startRow, endRow, shift, packShift,
            rowBits, cursors[range]);
      }
    });
    form = Form.PACKED;
    packedBaseDigit = nextDigit;
    values = dst;
    rows = null;
  }

  /** A pass that keeps (key, row) pairs as pairs, or packed values as packed values. */
  private void scatterToSameForm(int shift) {
    Form source = form;
    long srcColumn = column;
    long[] src = values;
    int[] srcRows = rows;
    long[] dst = workspace.valuesOtherThan(src);
    int[] dstRows = source == Form.PACKED ? null : workspace.rowsOtherThan(srcRows);
    runner.forEachRange("scatter", (range, startRow, endRow) -> {
      int[] cursor = cursors[range];
      switch (source) {
        case COLUMN -> ScatterKernels.columnToKeys(srcColumn, dst, dstRows, startRow, endRow,
            shift, cursor);
        case KEYS -> ScatterKernels.keysToKeys(src, srcRows, dst, dstRows, startRow, endRow, shift,
            cursor);
        case PACKED -> ScatterKernels.packedToPacked(src, dst, startRow, endRow, shift, cursor);
        default -> throw new IllegalStateException("no values to scatter in form " + source);
      }
    });
    form = source == Form.COLUMN ? Form.KEYS : source;
    values = dst;
    rows = dstRows;
  }
}
