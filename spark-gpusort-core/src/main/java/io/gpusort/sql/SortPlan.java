package io.gpusort.sql;

import io.gpusort.config.GpuSortConf;
import io.gpusort.config.GpuSortConf.GlobalMode;
import io.gpusort.engine.EngineOptions;
import java.io.Serializable;
import org.apache.spark.sql.types.StructType;

/**
 * One sort as the executors run it: the key spec, the input schema, and the configuration values
 * read on the driver when the plan was built.
 */
final class SortPlan implements Serializable {
  private static final long serialVersionUID = 1L;

  final KeySpec keys;
  final StructType inputSchema;
  final EngineOptions engineOptions;
  /** The largest row page ({@code chunk.maxBytes}). */
  final long chunkBytes;
  /** The most bytes of rows and keys in one run ({@code run.maxBytes}). */
  final long runBytes;
  /** Whether runs sorted on the CPU engine have their rows put in order on the host. */
  final boolean gatherRowsOnHost;
  /** Whether a sort within partitions above a columnar scan takes the scan's batches. */
  final boolean columnarIntake;
  /** Whether pages go to a GPU engine's device as they fill ({@code gather.uploadAhead}). */
  final boolean uploadAhead;
  /** Bytes of a run's staging ring on a GPU engine ({@code gather.stagingBytes}); 0 for none. */
  final long stagingBytes;
  /** Whether rows are handed on as they come back from the device ({@code gather.streamOutput}). */
  final boolean streamOutput;
  final GlobalMode globalMode;
  /** Whether the exchange's blocks of rows of one size are packed by column. */
  final boolean packRows;
  /** Whether the exchange's blocks carry string and binary keys' encoded words. */
  final boolean sendKeys;
  /** Whether a GPU reducer merges its blocks' runs on the device ({@code global.deviceMerge}). */
  final boolean deviceMerge;
  final int outputPartitions;
  final int sampleRowsPerPartition;
  final int maxAutoPartitions;
  final long advisoryPartitionBytes;
  final SortMetrics metrics;
  /**
   * Rows a task's sort holds in memory before it spills them whatever memory is left: the lower
   * of {@code spark.gpusort.spill.rowsThreshold} and Spark's
   * {@code spark.shuffle.spill.numElementsForceSpillThreshold}, which its own sorter honours too.
   */
  final int forceSpillRows;
  final long poolMaxIdleBytes;
  final long poolIdleTimeoutMillis;
  /** The page-locked arena asked for ({@code memory.pinned.*}). */
  final ArenaSizing.Keys arena;
  /**
   * Rows an input partition holds on average where Spark's statistics know the input's rows (a
   * cached relation once materialized, a range), else 0: the size the run's index starts at.
   */
  final long expectedPartitionRows;

  SortPlan(KeySpec keys, StructType inputSchema, GpuSortConf conf, int maxAutoPartitions,
      long advisoryPartitionBytes) {
    this(keys, inputSchema, conf, maxAutoPartitions, advisoryPartitionBytes, SortMetrics.NONE,
        Integer.MAX_VALUE, 0);
  }

  SortPlan(KeySpec keys, StructType inputSchema, GpuSortConf conf, int maxAutoPartitions,
      long advisoryPartitionBytes, SortMetrics metrics, int forceSpillRows,
      long expectedPartitionRows) {
    this.keys = keys;
    this.inputSchema = inputSchema;
    this.engineOptions = EngineOptions.of(conf);
    this.chunkBytes = conf.get(GpuSortConf.CHUNK_BYTES);
    this.runBytes = conf.get(GpuSortConf.RUN_BYTES);
    this.gatherRowsOnHost = conf.get(GpuSortConf.GATHER_ROWS_ON_HOST);
    this.columnarIntake = conf.get(GpuSortConf.COLUMNAR_INTAKE);
    this.uploadAhead = conf.get(GpuSortConf.UPLOAD_AHEAD);
    this.stagingBytes = conf.get(GpuSortConf.STAGING_BYTES);
    this.streamOutput = conf.get(GpuSortConf.STREAM_OUTPUT);
    this.globalMode = conf.get(GpuSortConf.GLOBAL_MODE);
    this.packRows = conf.get(GpuSortConf.PACK_ROWS);
    this.sendKeys = conf.get(GpuSortConf.SEND_KEYS);
    this.deviceMerge = conf.get(GpuSortConf.DEVICE_MERGE);
    this.outputPartitions = conf.get(GpuSortConf.OUTPUT_PARTITIONS);
    this.sampleRowsPerPartition = conf.get(GpuSortConf.SAMPLE_ROWS_PER_PARTITION);
    this.maxAutoPartitions = maxAutoPartitions;
    this.advisoryPartitionBytes = advisoryPartitionBytes;
    this.metrics = metrics;
    int ownThreshold = conf.get(GpuSortConf.SPILL_ROWS_THRESHOLD);
    this.forceSpillRows = Math.max(1,
        ownThreshold > 0 ? Math.min(ownThreshold, forceSpillRows) : forceSpillRows);
    this.poolMaxIdleBytes = conf.get(GpuSortConf.POOL_MAX_IDLE_BYTES);
    this.poolIdleTimeoutMillis = conf.get(GpuSortConf.POOL_IDLE_TIMEOUT);
    this.arena = ArenaSizing.Keys.of(conf);
    this.expectedPartitionRows = Math.max(0, expectedPartitionRows);
  }

  int numFields() {
    return inputSchema.size();
  }
}
