package io.gpusort.merge;

/** Sorting int ids by a comparator without boxing, for the host's exact tie-breaking. */
public final class IntSorts {
  private static final int INSERTION_SORT_MAX = 16;

  private IntSorts() {}

  /** Sorts {@code a[from..to)} stably by {@code cmp}. */
  public static void sort(int[] a, int from, int to, IntComparator cmp) {
    if (to - from < 2) {
      return;
    }
    int[] scratch = new int[to - from];
    mergeSort(a, from, to, scratch, cmp);
  }

  private static void mergeSort(int[] a, int from, int to, int[] scratch, IntComparator cmp) {
    if (to - from <= INSERTION_SORT_MAX) {
      insertionSort(a, from, to, cmp);
      return;
    }
    int mid = (from + to) >>> 1;
    mergeSort(a, from, mid, scratch, cmp);
    mergeSort(a, mid, to, scratch, cmp);
    if (cmp.compare(a[mid - 1], a[mid]) <= 0) {
      return;
    }
    int n = mid - from;
    System.arraycopy(a, from, scratch, 0, n);
    int i = 0;
    int j = mid;
    int k = from;
    while (i < n && j < to) {
      a[k++] = cmp.compare(a[j], scratch[i]) < 0 ? a[j++] : scratch[i++];
    }
    while (i < n) {
      a[k++] = scratch[i++];
    }
  }

  private static void insertionSort(int[] a, int from, int to, IntComparator cmp) {
    for (int i = from + 1; i < to; i++) {
      int x = a[i];
      int j = i - 1;
      while (j >= from && cmp.compare(a[j], x) > 0) {
        a[j + 1] = a[j];
        j--;
      }
      a[j + 1] = x;
    }
  }
}
