// What a read of the clock System.nanoTime reads (clock_gettime, CLOCK_MONOTONIC) costs with 1, 4
// and 16 threads reading it at once. The stage timers (SampledTimer) read it twice for each row
// they time. On the GPU host:
//
//   gcc -O2 -pthread kernels/gpu-host/clock-cost.c -o /tmp/clock-cost && /tmp/clock-cost
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#define READS 2000000

static long now_nanos(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000000L + t.tv_nsec;
}

static void *read_clock(void *nanos_per_read) {
  long start = now_nanos();
  for (int i = 0; i < READS; i++) {
    now_nanos();
  }
  *(double *)nanos_per_read = (double)(now_nanos() - start) / READS;
  return NULL;
}

int main(void) {
  for (int threads = 1; threads <= 16; threads *= 4) {
    pthread_t thread[16];
    double nanos[16];
    for (int i = 0; i < threads; i++) {
      pthread_create(&thread[i], NULL, read_clock, &nanos[i]);
    }
    double sum = 0;
    for (int i = 0; i < threads; i++) {
      pthread_join(thread[i], NULL);
      sum += nanos[i];
    }
    printf("clock_gettime: %d threads at once, %.1f ns a read\n", threads, sum / threads);
  }
  return 0;
}
