package io.gpusort.engine.cuda;

import static jcuda.driver.JCudaDriver.cuCtxSetCurrent;
import static jcuda.driver.JCudaDriver.cuMemHostRegister;
import static jcuda.driver.JCudaDriver.cuMemHostUnregister;

import io.gpusort.memory.NativeAllocator;
import jcuda.driver.CUcontext;
import jcuda.driver.CUresult;
import jcuda.driver.JCudaDriver;

/**
 * Page-locked host memory of the process's own mapping, registered with the driver
 * ({@code cuMemHostRegister}, portable) rather than allocated by it: each block is mapped with
 * its pages present ({@link HostMapping}), optionally on transparent huge pages, and only then
 * pinned. The driver then locks pages that are already there, so the call that holds the
 * process's memory map is short, and with huge pages it has 512 times fewer to lock; other
 * threads of the process that map memory or load classes wait behind each such call. Huge pages
 * are asked for only when told: on a host whose memory is fragmented, each 2 MiB fault may
 * compact memory first, and faulting then slows to a crawl. A block the driver refuses to
 * register is unmapped and the refusal thrown, as {@link PinnedHostAllocator} does for {@code
 * cuMemHostAlloc}.
 */
final class RegisteredHostAllocator implements NativeAllocator {
  private final CUcontext context;
  private final boolean hugePages;

  RegisteredHostAllocator(CUcontext context, boolean hugePages) {
    this.context = context;
    this.hugePages = hugePages;
  }

  @Override
  public long allocate(long sizeBytes) {
    long address = HostMapping.map(sizeBytes, hugePages);
    Cuda.check(cuCtxSetCurrent(context), "cuCtxSetCurrent");
    int result = cuMemHostRegister(new NativePointer(address), HostMapping.length(sizeBytes),
        JCudaDriver.CU_MEMHOSTREGISTER_PORTABLE);
    if (result != CUresult.CUDA_SUCCESS) {
      HostMapping.unmap(address, sizeBytes);
      throw new CudaException("cuMemHostRegister", result, sizeBytes + " bytes");
    }
    return address;
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
