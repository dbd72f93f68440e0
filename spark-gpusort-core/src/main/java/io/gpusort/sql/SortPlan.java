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
  final long chunkBytes;
  final GlobalMode globalMode;
  final int outputPartitions;
  final int sampleRowsPerPartition;
  final int maxAutoPartitions;
  final long advisoryPartitionBytes;
  final SortMetrics metrics;

  SortPlan(KeySpec keys, StructType inputSchema, GpuSortConf conf, int maxAutoPartitions,
      long advisoryPartitionBytes) {
    this(keys, inputSchema, conf, maxAutoPartitions, advisoryPartitionBytes, SortMetrics.NONE);
  }

  SortPlan(KeySpec keys, StructType inputSchema, GpuSortConf conf, int maxAutoPartitions,
      long advisoryPartitionBytes, SortMetrics metrics) {
    this.keys = keys;
    this.inputSchema = inputSchema;
    this.engineOptions = EngineOptions.of(conf);
    this.chunkBytes = conf.get(GpuSortConf.CHUNK_BYTES);
    this.globalMode = conf.get(GpuSortConf.GLOBAL_MODE);
    this.outputPartitions = conf.get(GpuSortConf.OUTPUT_PARTITIONS);
    this.sampleRowsPerPartition = conf.get(GpuSortConf.SAMPLE_ROWS_PER_PARTITION);
    this.maxAutoPartitions = maxAutoPartitions;
    this.advisoryPartitionBytes = advisoryPartitionBytes;
    this.metrics = metrics;
  }

  int numFields() {
    return inputSchema.size();
  }
}
