package io.gpusort.engine.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.lwjgl.system.MemoryUtil;

class HostMappingTest {
  @Test
  void lengthsAreWholeHugePages() {
    assertEquals(2L << 20, HostMapping.length(0));
    assertEquals(2L << 20, HostMapping.length(1));
    assertEquals(2L << 20, HostMapping.length(2L << 20));
    assertEquals(4L << 20, HostMapping.length((2L << 20) + 1));
  }

  @Test
  void thisHostCanMapMemoryItself() {
    assertNull(HostMapping.unavailable());
  }

  @Test
  void hugePagesAreGivenUpBelowAGibASecond() {
    long gib = 1L << 30;
    assertFalse(RegisteredHostAllocator.tooSlow(256L << 20, 200_000_000L));
    assertTrue(RegisteredHostAllocator.tooSlow(256L << 20, 300_000_000L));
    assertFalse(RegisteredHostAllocator.tooSlow(gib, 999_000_000L));
    assertTrue(RegisteredHostAllocator.tooSlow(gib, 1_001_000_000L));
  }

  @Test
  void mapsAlignedWritableMemoryEitherWay() {
    for (boolean hugePages : new boolean[] {false, true}) {
      long size = (5L << 20) + 123;
      long address = HostMapping.map(size, hugePages);
      try {
        assertEquals(0, address % HostMapping.HUGE_PAGE_BYTES, "2 MiB aligned");
        long length = HostMapping.length(size);
        // Present and zeroed, then writable to its last byte.
        for (long at = 0; at < length; at += 4096) {
          assertEquals(0, MemoryUtil.memGetByte(address + at));
        }
        MemoryUtil.memPutLong(address + length - 8, 0x1122334455667788L);
        assertEquals(0x1122334455667788L, MemoryUtil.memGetLong(address + length - 8));
      } finally {
        HostMapping.unmap(address, size);
      }
    }
  }
}
