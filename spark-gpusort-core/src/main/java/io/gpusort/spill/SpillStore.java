package io.gpusort.spill;

import java.io.IOException;

/** Where a sort writes its spilled runs: a new, empty file for each. */
@FunctionalInterface
public interface SpillStore {
  SpillFile create() throws IOException;
}
