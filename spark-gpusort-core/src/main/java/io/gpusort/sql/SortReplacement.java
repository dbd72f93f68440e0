package io.gpusort.sql;

import io.gpusort.config.GpuSortConf;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.rules.Rule;
import org.apache.spark.sql.execution.SortExec;
import org.apache.spark.sql.execution.SparkPlan;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Replaces Spark's physical {@code SortExec} nodes with {@link GpuSortExec} where every key can be
 * encoded: the sorts of {@code ORDER BY}, {@code Dataset.orderBy/sort}, {@code
 * sortWithinPartitions}, and the ones Spark plans under sort-merge joins and window functions. It
 * runs after Spark has placed its exchanges, so each replacement sorts within partitions (a
 * global sort's range exchange is already below it) and keeps the child's partitioning; the
 * output ordering is the same as the {@code SortExec}'s, so nothing above it changes.
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
    List<SparkPlan> children = CollectionConverters.asJava(plan.children());
    List<SparkPlan> rewritten = new ArrayList<>(children.size());
    boolean changed = false;
    for (SparkPlan child : children) {
      SparkPlan r = rewrite(child, settings);
      changed |= r != child;
      rewritten.add(r);
    }
    SparkPlan node = changed
        ? plan.withNewChildren(CollectionConverters.asScala(rewritten).toSeq()) : plan;
    if (node instanceof SortExec sort) {
      try {
        KeySpec.checkSupported(CollectionConverters.asJava(sort.sortOrder()));
      } catch (UnsupportedKeyException e) {
        LOG.info("Sort stays on Spark's SortExec: {}", e.getMessage());
        return node;
      }
      return new GpuSortExec(sort.sortOrder(), false, settings, sort.child());
    }
    return node;
  }
}
