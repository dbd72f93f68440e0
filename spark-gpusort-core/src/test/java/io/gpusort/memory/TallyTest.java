package io.gpusort.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

class TallyTest {
  @Test
  void sumsWhatEveryThreadAdds() throws InterruptedException {
    Tally tally = new Tally();
    int threads = 80; // more than the slots: some threads share one
    int adds = 20_000;
    CountDownLatch start = new CountDownLatch(1);
    List<Thread> started = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      long n = t + 1;
      Thread thread = new Thread(() -> {
        try {
          start.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
        for (int i = 0; i < adds; i++) {
          tally.add(n);
        }
        tally.increment();
      });
      thread.start();
      started.add(thread);
    }
    start.countDown();
    for (Thread thread : started) {
      thread.join();
    }
    long expected = (long) adds * threads * (threads + 1) / 2 + threads;
    assertEquals(expected, tally.sum());
  }
}
