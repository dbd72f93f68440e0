package io.gpusort.engine.cuda;

import static jcuda.driver.JCudaDriver.cuCtxSetCurrent;
import static jcuda.driver.JCudaDriver.cuDeviceGet;
import static jcuda.driver.JCudaDriver.cuDeviceGetAttribute;
import static jcuda.driver.JCudaDriver.cuDeviceGetCount;
import static jcuda.driver.JCudaDriver.cuDeviceGetName;
import static jcuda.driver.JCudaDriver.cuDevicePrimaryCtxRelease;
import static jcuda.driver.JCudaDriver.cuDevicePrimaryCtxRetain;
import static jcuda.driver.JCudaDriver.cuMemGetInfo;

import io.gpusort.memory.HostBuffer;
import io.gpusort.memory.NativeAllocator;
import io.gpusort.memory.PinMethod;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Semaphore;
import jcuda.driver.CUcontext;
import jcuda.driver.CUdevice;
import jcuda.driver.CUdevice_attribute;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One CUDA device as this process uses it: its primary context (shared with any other CUDA code
 * in the executor), the kernels loaded into it, a device memory pool under a budget, and a bound
 * on how many tasks sort on it at once, each with its own {@link Workspace} (stream and scratch).
 *
 * <p>Opened once per device and reference-counted: {@link #acquire} and {@link #release}. The last
 * release frees every device allocation, unloads the kernels and releases the context.
 */
final class CudaDevice {
  private static final Logger LOG = LoggerFactory.getLogger(CudaDevice.class);
  private static final Map<Integer, CudaDevice> OPEN = new HashMap<>();

  final int ordinal;
  final String name;
  final int multiprocessors;
  final int computeCapability;
  final CudaKernels kernels;
  final DeviceMemoryPool memory;

  private final CUdevice device;
  private final CUcontext context;
  private final Semaphore tasks;
  private final ArrayDeque<Workspace> idleWorkspaces = new ArrayDeque<>();
  private int references;
  /** Set by the last {@link #release}: workspaces made in the background are closed, not kept. */
  private boolean released;
  /** Counted down once the background preparation of workspaces has ended, done or failed. */
  private final java.util.concurrent.CountDownLatch prepared =
      new java.util.concurrent.CountDownLatch(1);

  private CudaDevice(int ordinal, long budgetBytes, int concurrentTasks) {
    this.ordinal = ordinal;
    device = new CUdevice();
    Cuda.check(cuDeviceGet(device, ordinal), "cuDeviceGet", "ordinal " + ordinal);
    context = new CUcontext();
    Cuda.check(cuDevicePrimaryCtxRetain(context, device), "cuDevicePrimaryCtxRetain");
    try {
      Cuda.check(cuCtxSetCurrent(context), "cuCtxSetCurrent");
      byte[] nameBytes = new byte[256];
      Cuda.check(cuDeviceGetName(nameBytes, nameBytes.length, device), "cuDeviceGetName");
      name = new String(nameBytes, java.nio.charset.StandardCharsets.US_ASCII).trim()
          .replace("\0", "");
      multiprocessors = attribute(CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
      computeCapability =
          10 * attribute(CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)
              + attribute(CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
      long[] free = new long[1];
      long[] total = new long[1];
      Cuda.check(cuMemGetInfo(free, total), "cuMemGetInfo");
      long budget = budgetBytes > 0 ? budgetBytes : free[0] / 10 * 8;
      memory = new DeviceMemoryPool(budget);
      kernels = new CudaKernels();
      tasks = new Semaphore(concurrentTasks, true);
      registerPinnedAllocator();
      prepareWorkspaces(concurrentTasks);
      LOG.info("CUDA device {} ({}, sm_{}, {} SMs): {} MiB free of {} MiB, budget {} MiB, "
          + "{} concurrent tasks", ordinal, name, computeCapability, multiprocessors,
          free[0] >> 20, total[0] >> 20, budget >> 20, concurrentTasks);
    } catch (RuntimeException e) {
      cuDevicePrimaryCtxRelease(device);
      throw e;
    }
  }

  /** The device {@code ordinal}, opened on first use with the budget and bound given then. */
  static synchronized CudaDevice acquire(int ordinal, long budgetBytes, int concurrentTasks) {
    CudaDevice open = OPEN.get(ordinal);
    if (open == null) {
      open = new CudaDevice(ordinal, budgetBytes, concurrentTasks);
      OPEN.put(ordinal, open);
    }
    open.references++;
    return open;
  }

  /** Drops one reference; the last frees the device's resources. */
  void release() {
    synchronized (CudaDevice.class) {
      if (--references > 0) {
        return;
      }
      OPEN.remove(ordinal);
    }
    makeCurrent();
    synchronized (idleWorkspaces) {
      released = true;
      for (Workspace w : idleWorkspaces) {
        w.close();
      }
      idleWorkspaces.clear();
    }
    memory.trim();
    kernels.close();
    cuDevicePrimaryCtxRelease(device);
  }

  /** Device bytes held by idle workspaces (their scratch and look-back words). */
  long idleWorkspaceBytes() {
    synchronized (idleWorkspaces) {
      long total = 0;
      for (Workspace w : idleWorkspaces) {
        total += w.deviceBytes();
      }
      return total;
    }
  }

  /** Devices currently open in this process (for tests). */
  static synchronized int openDevices() {
    return OPEN.size();
  }

  /** Makes this device's context current in the calling thread. */
  void makeCurrent() {
    Cuda.check(cuCtxSetCurrent(context), "cuCtxSetCurrent", "device " + ordinal);
  }

  /** Waits for a GPU-task slot, then hands out a workspace; give it back with {@link #done}. */
  Workspace begin() throws InterruptedException {
    tasks.acquire();
    try {
      return beginExtra();
    } catch (RuntimeException e) {
      tasks.release();
      throw e;
    }
  }

  /**
   * A second workspace for a task that holds a slot from {@link #begin} (its second stream, for
   * pipelining batches); give it back with {@link #doneExtra}.
   */
  Workspace beginExtra() {
    makeCurrent();
    synchronized (idleWorkspaces) {
      Workspace w = idleWorkspaces.poll();
      if (w != null) {
        return w;
      }
    }
    return new Workspace(this);
  }

  /**
   * Returns a workspace from {@link #beginExtra}; it holds no task slot. A workspace whose stream
   * may still hold failed work is closed instead of kept.
   */
  void doneExtra(Workspace workspace, boolean healthy) {
    if (healthy) {
      synchronized (idleWorkspaces) {
        idleWorkspaces.push(workspace);
      }
    } else {
      workspace.close();
    }
  }

  /** Returns {@code workspace} and its task slot, as {@link #doneExtra} does. */
  void done(Workspace workspace, boolean healthy) {
    try {
      doneExtra(workspace, healthy);
    } finally {
      tasks.release();
    }
  }

  /**
   * Makes the workspaces of {@code count} GPU-task slots, their staging slices page-locked, on a
   * background thread, so that no task of a fresh executor pins them or waits for their streams.
   * A failure is only logged: tasks then make their own.
   */
  private void prepareWorkspaces(int count) {
    Thread thread = new Thread(() -> {
      try {
        makeCurrent();
        for (int i = 0; i < count; i++) {
          Workspace w = new Workspace(this);
          try {
            w.staging(0);
            w.staging(1);
          } catch (RuntimeException e) {
            w.close();
            throw e;
          }
          synchronized (idleWorkspaces) {
            if (released) {
              w.close();
              return;
            }
            idleWorkspaces.push(w);
          }
        }
      } catch (RuntimeException e) {
        LOG.warn("Preparing the workspaces of device {} failed; tasks make their own", ordinal, e);
      } finally {
        prepared.countDown();
      }
    }, "gpusort-cuda-prepare-" + ordinal);
    thread.setDaemon(true);
    thread.start();
  }

  /** Waits for the background preparation of workspaces (for tests that count device memory). */
  void awaitPrepared() throws InterruptedException {
    prepared.await();
  }

  private int attribute(int attribute) {
    int[] value = new int[1];
    Cuda.check(cuDeviceGetAttribute(value, attribute, device), "cuDeviceGetAttribute",
        "attribute " + attribute);
    return value[0];
  }

  /**
   * Starts the process's page-locked arena on this device's allocator (pinned in the background),
   * from which the sort pipeline takes its pages, keys and permutations, which the driver moves
   * at full bus speed with no staging copy. The allocator keeps its own reference to this
   * context for the life of the process: freeing the context would free the memory.
   */
  private void registerPinnedAllocator() {
    CUcontext pinnedContext = new CUcontext();
    Cuda.check(cuDevicePrimaryCtxRetain(pinnedContext, device), "cuDevicePrimaryCtxRetain");
    int[] count = new int[1];
    Cuda.check(cuDeviceGetCount(count), "cuDeviceGetCount");
    if (!HostBuffer.usePinnedAllocator(pinnedAllocator(pinnedContext), count[0])) {
      cuDevicePrimaryCtxRelease(device);
    }
  }

  /**
   * The allocator the configured method names ({@link HostBuffer#pinMethod}); the driver's own
   * where the process cannot map memory itself (LWJGL's bindings of the C library missing).
   */
  private static NativeAllocator pinnedAllocator(CUcontext context) {
    PinMethod method = HostBuffer.pinMethod();
    if (method != PinMethod.DRIVER) {
      String unavailable = HostMapping.unavailable();
      if (unavailable == null) {
        return new RegisteredHostAllocator(context, method == PinMethod.HUGEPAGES);
      }
      LOG.warn("spark.gpusort.memory.pinned.method={}: the process cannot map memory itself ({});"
          + " the driver page-locks the arena", method.name().toLowerCase(Locale.ROOT),
          unavailable);
    }
    return new PinnedHostAllocator(context);
  }
}
