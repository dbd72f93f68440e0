package io.gpusort.merge;

/** Compares two items named by int ids (row indices), without boxing. */
@FunctionalInterface
public interface IntComparator {
  int compare(int a, int b);
}
