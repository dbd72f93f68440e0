package io.gpusort.engine.cuda;

import static jcuda.driver.JCudaDriver.cuCtxSetCurrent;
import static jcuda.driver.JCudaDriver.cuMemHostRegister;
import static jcuda.driver.JCudaDriver.cuMemHostUnregister;

import io.gpusort.memory.NativeAllocator;
import jcuda.driver.CUcontext;
import jcuda.driver.CUresult;
import jcuda.driver.JCudaDriver;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Page-locked host memory of the process's own mapping, registered with the driver
 * ({@code cuMemHostRegister}, portable) rather than allocated by it: each block is mapped with
 * every page faulted in ({@link HostMapping}), on transparent huge pages where asked, and only then
 * pinned. The driver then locks pages that are already there, so its call, which holds the
 * process's memory map (every other thread that maps memory or loads a class waits behind it), is
 * short, and with huge pages it has 512 times fewer to lock. On a host whose memory is fragmented
 * each 2 MiB fault may compact memory first and slow to a crawl: once a block's huge pages fault in
 * slowly, the following blocks take ordinary pages. A block the driver refuses to register is
 * unmapped and the refusal thrown, as {@link PinnedHostAllocator} does for {@code cuMemHostAlloc}.
 */
final class RegisteredHostAllocator implements NativeAllocator {
  private static final Logger LOG = LoggerFactory.getLogger(RegisteredHostAllocator.class);
  /**
   * Huge pages are given up once a block's pages take longer than this a GiB to fault in: ordinary
   * pages fault in at about 2.4 GiB/s a thread (H100 host, pin-cost.c), huge pages at 8 where the
   * host has free 2 MiB blocks; slower means the kernel compacts memory for each one.
   */
  static final long SLOW_NANOS_PER_GIB = 1_000_000_000L;

  private final CUcontext context;
  private volatile boolean hugePages;

  RegisteredHostAllocator(CUcontext context, boolean hugePages) {
    this.context = context;
    this.hugePages = hugePages;
  }

  @Override
  public long allocate(long sizeBytes) {
    boolean huge = hugePages;
    long length = HostMapping.length(sizeBytes);
    long start = System.nanoTime();
    long address = HostMapping.map(sizeBytes, huge);
    long faultNanos = System.nanoTime() - start;
    if (huge && tooSlow(length, faultNanos)) {
      hugePages = false;
      LOG.info("Huge pages of {} MiB took {} ms to fault in: the arena goes on with ordinary "
          + "pages", length >> 20, faultNanos / 1_000_000);
    }
    Cuda.check(cuCtxSetCurrent(context), "cuCtxSetCurrent");
    int result = cuMemHostRegister(new NativePointer(address), length,
        JCudaDriver.CU_MEMHOSTREGISTER_PORTABLE);
    if (result != CUresult.CUDA_SUCCESS) {
      HostMapping.unmap(address, sizeBytes);
      throw new CudaException("cuMemHostRegister", result, sizeBytes + " bytes");
    }
    return address;
  }

  /** Whether faulting {@code bytes} in took longer than {@link #SLOW_NANOS_PER_GIB} allows. */
  static boolean tooSlow(long bytes, long nanos) {
    return nanos > SLOW_NANOS_PER_GIB * (double) bytes / (1L << 30);
  }

  @Override
  public void free(long address, long sizeBytes) {
    Cuda.check(cuCtxSetCurrent(context), "cuCtxSetCurrent");
    Cuda.check(cuMemHostUnregister(new NativePointer(address)), "cuMemHostUnregister",
        sizeBytes + " bytes");
    HostMapping.unmap(address, sizeBytes);
  }

  @Override
  public boolean pinned() {
    return true;
  }
}
