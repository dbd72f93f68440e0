package io.gpusort.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.management.HotSpotDiagnosticMXBean;
import java.lang.management.ManagementFactory;
import org.junit.jupiter.api.Test;

/** The benchmarks' runtime: the heap kept through the collections before timed runs. */
class ExampleRuntimeTest {
  @Test
  void fullCollectionsKeepTheHeapOnceAsked() {
    HotSpotDiagnosticMXBean vm = ManagementFactory.getPlatformMXBean(
        HotSpotDiagnosticMXBean.class);
    String before = vm.getVMOption("MaxHeapFreeRatio").getValue();
    try {
      String line = ExampleRuntime.keepHeapThroughCollections();
      assertTrue(line.startsWith("heap: kept"), line);
      assertEquals("100", vm.getVMOption("MaxHeapFreeRatio").getValue());
      // A full collection of a nearly empty heap no longer gives it back to the OS.
      byte[][] held = new byte[64][];
      for (int i = 0; i < held.length; i++) {
        held[i] = new byte[1 << 20];
      }
      long committed = Runtime.getRuntime().totalMemory();
      held = null;
      System.gc();
      assertTrue(Runtime.getRuntime().totalMemory() >= committed,
          Runtime.getRuntime().totalMemory() + " bytes committed after the collection, "
              + committed + " before");
    } finally {
      vm.setVMOption("MaxHeapFreeRatio", before);
    }
  }
}
