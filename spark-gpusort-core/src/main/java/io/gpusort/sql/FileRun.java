package io.gpusort.sql;

import io.gpusort.spill.RunReader;
import io.gpusort.spill.SpillFile;
import java.io.IOException;

/** A sorted run spilled to a local file: rows in order with their encoded keys. */
record FileRun(SpillFile file, long numRows, int numWords) {
  RunReader open() throws IOException {
    return new RunReader(file.openForRead(), numWords, numRows);
  }
}
