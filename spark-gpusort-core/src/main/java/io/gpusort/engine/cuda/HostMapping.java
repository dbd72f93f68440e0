package io.gpusort.engine.cuda;

import io.gpusort.engine.NativeLibraries;
import org.lwjgl.system.JNI;
import org.lwjgl.system.MemoryUtil;
import org.lwjgl.system.linux.DynamicLinkLoader;
import org.lwjgl.system.linux.MMAN;

/**
 * Anonymous memory of the process's own mapping, on 2 MiB boundaries, optionally offered
 * transparent huge pages ({@code madvise(MADV_HUGEPAGE)}), with every page faulted in by a write
 * before it is handed out: what {@link RegisteredHostAllocator} registers with the driver. Sizes
 * are rounded up to 2 MiB.
 *
 * <p>The pages are faulted in one write at a time rather than by {@code MADV_POPULATE_WRITE}: each
 * fault holds the process's memory map only briefly, where that call holds it for the whole range
 * (on the lent H100 host, 2026-12-07, {@code kernels/gpu-host/pin-cost.c}: a thread mapping memory
 * beside it waited up to 55 ms at the 99th percentile, beside the writes 0.24 ms).
 */
final class HostMapping {
  static final long HUGE_PAGE_BYTES = 2L << 20;
  private static final long PAGE_BYTES = 4096;
  private static final int MADV_HUGEPAGE = 14;

  private HostMapping() {}

  /** The C library's {@code madvise}, looked up once; 0 where it was not found. */
  private static final class Madvise {
    static final long ADDRESS = find();

    private static long find() {
      NativeLibraries.configureLwjgl();
      long libc = DynamicLinkLoader.dlopen("libc.so.6", DynamicLinkLoader.RTLD_NOW);
      return libc == 0 ? 0 : DynamicLinkLoader.dlsym(libc, "madvise");
    }
  }

  /**
   * Null where this process can map memory itself, else why not (LWJGL's bindings of the C
   * library could not be loaded).
   */
  static String unavailable() {
    try {
      NativeLibraries.configureLwjgl();
      return MMAN.MAP_FAILED == 0 ? "no mmap" : null;
    } catch (LinkageError | RuntimeException e) {
      return e.toString();
    }
  }

  /** {@code sizeBytes} rounded up to whole 2 MiB pages (at least one). */
  static long length(long sizeBytes) {
    long bytes = Math.max(1, sizeBytes);
    return (bytes + HUGE_PAGE_BYTES - 1) / HUGE_PAGE_BYTES * HUGE_PAGE_BYTES;
  }

  /**
   * Maps {@link #length}({@code sizeBytes}) bytes starting on a 2 MiB boundary, every page present
   * and zero, on huge pages if {@code hugePages} and the host gives them; throws {@link
   * OutOfMemoryError} where the mapping is refused.
   */
  static long map(long sizeBytes, boolean hugePages) {
    long length = length(sizeBytes);
    long mapped = length + HUGE_PAGE_BYTES;
    long base = MMAN.nmmap(0L, 0L, mapped, MMAN.PROT_READ | MMAN.PROT_WRITE,
        MMAN.MAP_PRIVATE | MMAN.MAP_ANONYMOUS, -1, 0L);
    if (base == MMAN.MAP_FAILED) {
      throw new OutOfMemoryError("mmap of " + mapped + " bytes failed");
    }
    long address = (base + HUGE_PAGE_BYTES - 1) / HUGE_PAGE_BYTES * HUGE_PAGE_BYTES;
    if (address > base) {
      MMAN.nmunmap(0L, base, address - base);
    }
    long tail = base + mapped - (address + length);
    if (tail > 0) {
      MMAN.nmunmap(0L, address + length, tail);
    }
    long madvise = Madvise.ADDRESS;
    if (hugePages && madvise != 0) {
      JNI.invokePPI(address, length, MADV_HUGEPAGE, madvise);
    }
    for (long at = 0; at < length; at += PAGE_BYTES) {
      MemoryUtil.memPutByte(address + at, (byte) 0);
    }
    return address;
  }

  /** Unmaps what {@link #map} returned for {@code sizeBytes}. */
  static void unmap(long address, long sizeBytes) {
    MMAN.nmunmap(0L, address, length(sizeBytes));
  }
}
