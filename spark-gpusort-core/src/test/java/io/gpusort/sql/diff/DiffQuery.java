package io.gpusort.sql.diff;

import java.util.List;
import java.util.Set;
import java.util.function.Function;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * One generated query: how to build it with the replacement on and off (the same SQL for most
 * shapes; GpuSort's transform against Spark's own Dataset method for the API shapes), and how to
 * compare the two results.
 *
 * @param text the query as a replay prints it
 * @param keyColumns output columns whose values order the rows (a prefix of the sort order):
 *     rows must come in the same key order, rows with equal keys as the same multiset; empty
 *     compares the whole output (or each partition) as a multiset
 * @param caseInsensitiveKeys key columns with the UTF8_LCASE collation (equal ignoring case)
 * @param cutEdges LIMIT or OFFSET cut the first or last key group: there only counts are compared
 */
record DiffQuery(DiffShape shape, String text, Function<SparkSession, Dataset<Row>> on,
    Function<SparkSession, Dataset<Row>> off, List<String> keyColumns,
    Set<String> caseInsensitiveKeys, boolean cutEdges) {

  /** A query that is the same SQL text with the replacement on and off. */
  static DiffQuery sql(DiffShape shape, String sql, List<String> keys, Set<String> lcase,
      boolean cutEdges) {
    Function<SparkSession, Dataset<Row>> build = spark -> spark.sql(sql);
    return new DiffQuery(shape, sql, build, build, keys, lcase, cutEdges);
  }
}
