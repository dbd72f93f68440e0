package io.gpusort.sql;

import io.gpusort.compat.ScalaCollections;
import io.gpusort.config.GpuSortConf;
import io.gpusort.config.GpuSortConf.GlobalMode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.expressions.SortOrder;
import org.apache.spark.sql.catalyst.plans.physical.RangePartitioning;
import org.apache.spark.sql.catalyst.rules.Rule;
import org.apache.spark.sql.execution.SortExec;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.exchange.ENSURE_REQUIREMENTS$;
import org.apache.spark.sql.execution.exchange.ShuffleExchangeExec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Replaces Spark's physical {@code SortExec} nodes where every key can be encoded: the sorts of
 * {@code ORDER BY}, {@code Dataset.orderBy/sort}, {@code sortWithinPartitions}, and the ones
 * Spark plans under sort-merge joins and window functions. It runs after Spark has placed its
 * exchanges. A global sort over the range exchange Spark put below it becomes, with {@code
 * spark.gpusort.global.mode=merge} (the default), one {@link GpuRangeSortExchangeExec} in place
 * of both: sorted on the engine, cut at the bounds, shuffled in blocks and merged. Every other
 * sort becomes a {@link GpuSortExec} that sorts within partitions (a global sort's exchange is
 * already below it) and keeps the child's partitioning. Either way the output ordering is the
 * {@code SortExec}'s, so nothing above it changes.
 *
 * <p>{@code spark.gpusort.sql.enabled=false} in the session switches it off; sorts on keys no
 * engine encodes (maps, arrays, structs, collated strings, ...) stay on {@code SortExec}.
 */
public final class SortReplacement extends Rule<SparkPlan> {
  private static final Logger LOG = LoggerFactory.getLogger(SortReplacement.class);

  private final SparkSession session;

  public SortReplacement(SparkSession session) {
    this.session = session;
  }

  @Override
  public SparkPlan apply(SparkPlan plan) {
    Map<String, String> settings = GpuSortTransform.gpusortSettings(session);
    if (!GpuSortConf.of(settings).get(GpuSortConf.SQL_ENABLED)) {
      return plan;
    }
    return rewrite(plan, settings);
  }

  private static SparkPlan rewrite(SparkPlan plan, Map<String, String> settings) {
    List<SparkPlan> children = ScalaCollections.asJava(plan.children());
    List<SparkPlan> rewritten = new ArrayList<>(children.size());
    boolean changed = false;
    for (SparkPlan child : children) {
      SparkPlan r = rewrite(child, settings);
      changed |= r != child;
      rewritten.add(r);
    }
    SparkPlan node = changed
        ? plan.withNewChildren(ScalaCollections.list(rewritten)) : plan;
    if (node instanceof SortExec sort) {
      try {
        KeySpec.checkSupported(ScalaCollections.asJava(sort.sortOrder()));
      } catch (UnsupportedKeyException e) {
        LOG.info("Sort stays on Spark's SortExec: {}", e.getMessage());
        return node;
      }
      ShuffleExchangeExec range = rangeExchangeBelow(sort, settings);
      if (range != null) {
        GpuRangeSortExchangeExec fused = new GpuRangeSortExchangeExec(
            ScalaCollections.immutable(sort.sortOrder()),
            range.outputPartitioning().numPartitions(), settings, range.child());
        // The sort's logical node, so that adaptive execution's re-planning takes the stage for
        // the whole sort and plans no second one above it.
        fused.copyTagsFrom(sort);
        return fused;
      }
      return new GpuSortExec(ScalaCollections.immutable(sort.sortOrder()), false, settings,
          sort.child());
    }
    return node;
  }

  /**
   * The range exchange Spark put under a global {@code sort} for its ordering, where the merge
   * mode replaces both with one {@link GpuRangeSortExchangeExec}: partitioned on the sort's own
   * keys, for the sort's requirement (not a user's {@code repartitionByRange}). Null otherwise,
   * and for {@code global.mode=sort}, where the sort stays above Spark's exchange.
   */
  private static ShuffleExchangeExec rangeExchangeBelow(SortExec sort,
      Map<String, String> settings) {
    if (!sort.global() || GpuSortConf.of(settings).get(GpuSortConf.GLOBAL_MODE) != GlobalMode.MERGE
        || !(sort.child() instanceof ShuffleExchangeExec exchange)
        || exchange.shuffleOrigin() != ENSURE_REQUIREMENTS$.MODULE$
        || !(exchange.outputPartitioning() instanceof RangePartitioning range)) {
      return null;
    }
    List<SortOrder> wanted = ScalaCollections.asJava(sort.sortOrder());
    List<SortOrder> ranged = ScalaCollections.asJava(range.ordering());
    if (wanted.size() != ranged.size()) {
      return null;
    }
    for (int i = 0; i < wanted.size(); i++) {
      if (!wanted.get(i).semanticEquals(ranged.get(i))) {
        return null;
      }
    }
    return exchange;
  }
}
