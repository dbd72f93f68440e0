package io.gpusort.examples;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The page faults {@link ArenaReport}'s first-run table counts. */
class ArenaReportTest {
  @Test
  void touchingNewMemoryCountsMinorFaults() {
    assumeTrue(Files.isReadable(Path.of("/proc/self/stat")), "no /proc/self/stat here");
    long before = ArenaReport.Mark.processMinorFaults();
    // Direct memory is new to the process and zeroed when allocated: its pages are touched.
    ByteBuffer fresh = ByteBuffer.allocateDirect(64 << 20);
    for (int i = 0; i < fresh.capacity(); i += 4096) {
      fresh.put(i, (byte) 1);
    }
    long after = ArenaReport.Mark.processMinorFaults();
    assertTrue(before >= 0, "minor faults not read: " + before);
    assertTrue(after > before, "64 MiB touched, minor faults " + before + " -> " + after);
  }
}
