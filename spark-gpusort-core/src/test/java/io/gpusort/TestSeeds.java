package io.gpusort;

import java.util.SplittableRandom;

/** The base seed of the randomized tests, and how a failure message names it. */
public final class TestSeeds {
  private TestSeeds() {}

  /** The seed from {@code -Dgpusort.test.seed} (decimal or 0x hex), else a random one. */
  public static long baseSeed() {
    String property = System.getProperty("gpusort.test.seed");
    if (property != null && !property.isBlank()) {
      return Long.decode(property.trim());
    }
    return new SplittableRandom().nextLong();
  }

  /** The text failure messages end with, so a failing run can be replayed. */
  public static String rerunHint(long seed) {
    return " (seed " + seed + "; rerun with -Dgpusort.test.seed=" + seed + ")";
  }
}
