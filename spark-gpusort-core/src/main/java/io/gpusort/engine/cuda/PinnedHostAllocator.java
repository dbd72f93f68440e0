package io.gpusort.engine.cuda;

import static jcuda.driver.JCudaDriver.cuCtxSetCurrent;
import static jcuda.driver.JCudaDriver.cuMemFreeHost;
import static jcuda.driver.JCudaDriver.cuMemHostAlloc;

import io.gpusort.memory.NativeAllocator;
import jcuda.driver.CUcontext;
import jcuda.driver.JCudaDriver;

/**
 * Page-locked host memory from {@code cuMemHostAlloc} (portable: usable by every context), for the
 * host buffers that go to and come from the device. It holds a reference to its device's primary
 * context for the life of the process, since freeing a context frees its pinned memory.
 */
final class PinnedHostAllocator implements NativeAllocator {
  private final CUcontext context;

  PinnedHostAllocator(CUcontext context) {
    this.context = context;
  }

  @Override
  public long allocate(long sizeBytes) {
    Cuda.check(cuCtxSetCurrent(context), "cuCtxSetCurrent");
    NativePointer pointer = new NativePointer();
    int result = cuMemHostAlloc(pointer, Math.max(1, sizeBytes),
        JCudaDriver.CU_MEMHOSTALLOC_PORTABLE);
    if (result != jcuda.driver.CUresult.CUDA_SUCCESS) {
      // Page-locked memory is limited by the OS; plain memory still works, only slower to move.
      throw new CudaException("cuMemHostAlloc", result, sizeBytes + " bytes");
    }
    return pointer.address();
  }

  @Override
  public void free(long address, long sizeBytes) {
    Cuda.check(cuCtxSetCurrent(context), "cuCtxSetCurrent");
    Cuda.check(cuMemFreeHost(new NativePointer(address)), "cuMemFreeHost", sizeBytes + " bytes");
  }

  @Override
  public boolean holdsMemoryMap() {
    return true;
  }

  @Override
  public boolean pinned() {
    return true;
  }
}
