package io.gpusort.sql;

import io.gpusort.engine.Engines;
import io.gpusort.engine.KeyBatch;
import io.gpusort.engine.SortEngine;
import io.gpusort.memory.HostBuffer;

/**
 * The base of the row path's fakes of a GPU engine: named cuda, sorting keys on the CPU engine,
 * and saying it gathers rows on a device, whose transfers each fake then plays in host memory.
 */
abstract class CpuBackedDeviceEngine implements SortEngine {
  @Override
  public String name() {
    return "cuda";
  }

  @Override
  public void sort(KeyBatch keys, HostBuffer permutation) {
    Engines.cpu().sort(keys, permutation);
  }

  @Override
  public boolean gathersRowsOnDevice() {
    return true;
  }
}
