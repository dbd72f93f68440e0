// What page-locking host memory costs, and what it costs the rest of the process, for each way
// the arena could pin it: cuMemHostAlloc in chunks (what PinnedArena does now), and memory of our
// own (mmap) registered with cuMemHostRegister, its pages touched before or not, with or without
// transparent huge pages. A victim thread meanwhile does what a JVM's other threads do while the
// arena pins (map a little memory, touch it, unmap it: class loading, thread stacks, heap growth)
// and reports how long each such step took; alone first, as the baseline. Each mode then copies
// its first chunk to the device to show that the memory is page-locked (pinned speed).
//
//   nvcc -O2 kernels/gpu-host/pin-cost.c -lcuda -lpthread -o /tmp/pin-cost && /tmp/pin-cost 8
#define _GNU_SOURCE
#include <cuda.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#define MAX_CHUNKS 4096
#define VICTIM_BYTES (256 << 10)
#define MAX_STEPS 4000000

enum kind { HOST_ALLOC, REGISTER, TOUCH_REGISTER, THP_REGISTER, POPULATE_REGISTER };

struct mode {
  const char *name;
  enum kind kind;
  size_t chunk_bytes;
  int threads;
};

static CUcontext context;
static size_t total_bytes;
static struct mode current;
static void *chunk_at[MAX_CHUNKS];
static size_t mapped_bytes[MAX_CHUNKS];
static int next_chunk;
static int chunk_count;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static double touch_seconds[64];
static double register_seconds[64];
static volatile int victim_stop;
static double *steps;
static long step_count;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

static void check(CUresult result, const char *what) {
  if (result != CUDA_SUCCESS) {
    const char *name = "?";
    cuGetErrorName(result, &name);
    fprintf(stderr, "%s: %s\n", what, name);
    exit(1);
  }
}

// Memory of our own, 2 MiB aligned, so that huge pages can back it.
static void *map_aligned(size_t bytes, size_t *mapped) {
  size_t align = 2 << 20;
  char *p = mmap(NULL, bytes + align, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    perror("mmap");
    exit(1);
  }
  *mapped = bytes + align;
  return (void *)(((size_t)p + align - 1) / align * align);
}

static void *pin(void *arg) {
  int id = (int)(long)arg;
  check(cuCtxSetCurrent(context), "cuCtxSetCurrent");
  for (;;) {
    pthread_mutex_lock(&lock);
    int i = next_chunk < chunk_count ? next_chunk++ : -1;
    pthread_mutex_unlock(&lock);
    if (i < 0) {
      return NULL;
    }
    size_t n = current.chunk_bytes;
    double start = now();
    if (current.kind == HOST_ALLOC) {
      check(cuMemHostAlloc(&chunk_at[i], n, CU_MEMHOSTALLOC_PORTABLE), "cuMemHostAlloc");
      register_seconds[id] += now() - start;
      continue;
    }
    char *p = map_aligned(n, &mapped_bytes[i]);
    chunk_at[i] = p;
    if (current.kind == THP_REGISTER) {
      madvise(p, n, MADV_HUGEPAGE);
    }
    if (current.kind == TOUCH_REGISTER || current.kind == THP_REGISTER) {
      for (size_t at = 0; at < n; at += 4096) {
        p[at] = 0;
      }
    } else if (current.kind == POPULATE_REGISTER) {
      if (madvise(p, n, MADV_POPULATE_WRITE) != 0) {
        perror("madvise(MADV_POPULATE_WRITE)");
      }
    }
    double touched = now();
    touch_seconds[id] += touched - start;
    check(cuMemHostRegister(p, n, CU_MEMHOSTREGISTER_PORTABLE), "cuMemHostRegister");
    register_seconds[id] += now() - touched;
  }
}

// Maps a little memory, touches each page, unmaps it: each step's seconds into steps.
static void *victim(void *unused) {
  while (!victim_stop && step_count < MAX_STEPS) {
    double start = now();
    char *p = mmap(NULL, VICTIM_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    for (int at = 0; at < VICTIM_BYTES; at += 4096) {
      p[at] = 1;
    }
    munmap(p, VICTIM_BYTES);
    steps[step_count++] = now() - start;
  }
  return NULL;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void report_victim(const char *name, double seconds) {
  qsort(steps, step_count, sizeof(double), by_value);
  double sum = 0;
  for (long i = 0; i < step_count; i++) {
    sum += steps[i];
  }
  printf("%-28s victim: %8ld steps in %6.2f s, mean %8.1f us, p50 %7.1f, p99 %8.1f, max %8.1f\n",
      name, step_count, seconds, 1e6 * sum / step_count, 1e6 * steps[step_count / 2],
      1e6 * steps[step_count * 99 / 100], 1e6 * steps[step_count - 1]);
}

static void run(struct mode m) {
  current = m;
  chunk_count = (int)(total_bytes / m.chunk_bytes);
  next_chunk = 0;
  memset(touch_seconds, 0, sizeof touch_seconds);
  memset(register_seconds, 0, sizeof register_seconds);
  step_count = 0;
  victim_stop = 0;
  pthread_t v, t[64];
  pthread_create(&v, NULL, victim, NULL);
  double start = now();
  for (int i = 0; i < m.threads; i++) {
    pthread_create(&t[i], NULL, pin, (void *)(long)i);
  }
  for (int i = 0; i < m.threads; i++) {
    pthread_join(t[i], NULL);
  }
  double seconds = now() - start;
  victim_stop = 1;
  pthread_join(v, NULL);
  double touch = 0, reg = 0;
  for (int i = 0; i < m.threads; i++) {
    touch += touch_seconds[i];
    reg += register_seconds[i];
  }
  printf("%-28s pinned %5.1f GiB in %6.2f s (%5.2f GiB/s); thread-s touching %6.2f, "
      "pinning %6.2f\n", m.name, total_bytes / (double)(1L << 30), seconds,
      total_bytes / (double)(1L << 30) / seconds, touch, reg);
  report_victim(m.name, seconds);
  CUdeviceptr device;
  size_t n = m.chunk_bytes;
  check(cuMemAlloc(&device, n), "cuMemAlloc");
  check(cuMemcpyHtoD(device, chunk_at[0], n), "cuMemcpyHtoD");
  double copy = now();
  for (int r = 0; r < 4; r++) {
    check(cuMemcpyHtoD(device, chunk_at[r % chunk_count], n), "cuMemcpyHtoD");
  }
  printf("%-28s host to device from the chunks: %5.1f GB/s\n", m.name,
      4.0 * n / (now() - copy) / 1e9);
  cuMemFree(device);
  double freeing = now();
  for (int i = 0; i < chunk_count; i++) {
    if (m.kind == HOST_ALLOC) {
      cuMemFreeHost(chunk_at[i]);
    } else {
      cuMemHostUnregister(chunk_at[i]);
      munmap(chunk_at[i], mapped_bytes[i] - (2 << 20));
    }
  }
  printf("%-28s freed in %.2f s\n", m.name, now() - freeing);
}

int main(int argc, char **argv) {
  total_bytes = (size_t)(argc > 1 ? atof(argv[1]) : 8) * (1L << 30);
  steps = malloc(sizeof(double) * MAX_STEPS);
  CUdevice device;
  check(cuInit(0), "cuInit");
  check(cuDeviceGet(&device, 0), "cuDeviceGet");
  check(cuDevicePrimaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain");
  check(cuCtxSetCurrent(context), "cuCtxSetCurrent");
  step_count = 0;
  victim_stop = 0;
  pthread_t v;
  double start = now();
  pthread_create(&v, NULL, victim, NULL);
  struct timespec two = {2, 0};
  nanosleep(&two, NULL);
  victim_stop = 1;
  pthread_join(v, NULL);
  report_victim("alone", now() - start);
  struct mode modes[] = {
      {"hostalloc 256M x2", HOST_ALLOC, 256 << 20, 2},
      {"hostalloc 64M x2", HOST_ALLOC, 64 << 20, 2},
      {"register 256M x2", REGISTER, 256 << 20, 2},
      {"touch+register 256M x2", TOUCH_REGISTER, 256 << 20, 2},
      {"populate+register 256M x2", POPULATE_REGISTER, 256 << 20, 2},
      {"thp+touch+register 256M x2", THP_REGISTER, 256 << 20, 2},
      {"thp+touch+register 256M x4", THP_REGISTER, 256 << 20, 4},
      {"thp+touch+register 1G x2", THP_REGISTER, 1L << 30, 2},
  };
  for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
    run(modes[i]);
    fflush(stdout);
  }
  return 0;
}
