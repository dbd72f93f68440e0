package io.gpusort.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;

/** What {@link DiskSettle} reads of the kernel's memory report. */
class DiskSettleTest {
  @Test
  void pendingWritesAreDirtyAndWritebackPagesOnly() {
    List<String> meminfo = List.of("MemTotal:       131961976 kB", "Dirty:            524288 kB",
        "Writeback:         1024 kB", "WritebackTmp:      99999 kB", "AnonPages:      1000 kB");
    assertEquals((524288L + 1024L) * 1024, DiskSettle.pendingBytes(meminfo));
    assertEquals(-1, DiskSettle.pendingBytes(List.of("MemTotal: 1 kB")));
  }
}
