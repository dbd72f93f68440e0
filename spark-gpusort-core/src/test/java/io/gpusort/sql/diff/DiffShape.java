package io.gpusort.sql.diff;

/** The query shapes the differential suite generates, each compared with the replacement off. */
enum DiffShape {
  /** ORDER BY 1-4 keys (columns and expressions) over the whole table. */
  ORDER_BY,
  /** ORDER BY with LIMIT and/or OFFSET: the rows at a cut key group may legitimately differ. */
  ORDER_BY_LIMIT,
  /** SORT BY (sortWithinPartitions), after DISTRIBUTE BY or on the input partitioning. */
  SORT_BY,
  /** The REPARTITION_BY_RANGE hint under SORT BY on the same columns, in any direction. */
  RANGE_REPARTITION,
  /** Dataset.transform(GpuSort.byKey(...)) against Dataset.orderBy with the replacement off. */
  BY_KEY,
  /** Dataset.transform(GpuSort.withinPartitions(...)) against sortWithinPartitions. */
  WITHIN_PARTITIONS,
  /** Window functions whose result does not depend on the order of ties. */
  WINDOW,
  /** Sort-merge joins of every equi-join type, with null and skewed keys. */
  SORT_MERGE_JOIN,
  /** DISTINCT or GROUP BY, then ORDER BY. */
  GROUP_ORDER,
  /** UNION [ALL], then ORDER BY. */
  UNION_ORDER;

  /** Whether this shape compares each output partition (Spark's partitioning is deterministic). */
  boolean perPartition() {
    return this == SORT_BY || this == RANGE_REPARTITION || this == WITHIN_PARTITIONS;
  }
}
