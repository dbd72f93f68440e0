package io.gpusort.sql;

import io.gpusort.compat.Datasets;
import io.gpusort.compat.ScalaCollections;
import io.gpusort.config.GpuSortConf;
import io.gpusort.engine.EngineOptions;
import io.gpusort.engine.Engines;
import java.io.Serializable;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.Sort;
import org.apache.spark.sql.catalyst.rules.Rule;
import org.apache.spark.sql.catalyst.trees.TreeNodeTag;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.SparkStrategy;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.runtime.AbstractFunction1;

/**
 * The function {@code GpuSort.byKey} and {@code withinPartitions} return for Dataset.transform.
 *
 * <p>It lets Spark analyze the equivalent {@code orderBy} / {@code sortWithinPartitions} (so names
 * resolve, and fail, exactly as there, before any job runs), then tags the analyzed {@code Sort}
 * with the session's {@code spark.gpusort.*} settings when every key can be encoded. The tagged
 * {@code Sort} stays Spark's own through Spark's optimizer, which removes it wherever it would
 * remove the sort of {@code orderBy} (one row at most, constant keys, a sort above it), so that
 * its keys are then never evaluated, as there; {@link GpuSortNodes} turns the tagged sorts that
 * remain into {@link GpuSortNode}s, which {@link GpuSortStrategy} plans.
 */
public final class GpuSortTransform<T> extends AbstractFunction1<Dataset<T>, Dataset<T>>
    implements Serializable {
  private static final long serialVersionUID = 1L;
  private static final Logger LOG = LoggerFactory.getLogger(GpuSortTransform.class);

  /** The tag of a Sort that GpuSort is to run: the spark.gpusort.* settings it was asked with. */
  static final TreeNodeTag<Map<String, String>> SORT_SETTINGS =
      new TreeNodeTag<>("spark.gpusort.sort");

  private final Column[] sortOrders;
  private final boolean global;

  public GpuSortTransform(Column[] sortOrders, boolean global) {
    this.sortOrders = sortOrders.clone();
    this.global = global;
  }

  @Override
  public Dataset<T> apply(Dataset<T> input) {
    Datasets.requireClassic(input);
    SparkSession session = input.sparkSession();
    Map<String, String> settings = gpusortSettings(session);
    GpuSortConf conf = GpuSortConf.of(settings);
    Engines.checkAvailable(EngineOptions.of(conf));
    EarlyStart.forLocal(session.sparkContext(), settings);
    EarlyStart.forDriver(session, settings);

    Dataset<T> sparkSorted = global
        ? input.orderBy(sortOrders)
        : input.sortWithinPartitions(sortOrders);
    LogicalPlan analyzed = sparkSorted.queryExecution().analyzed();
    Sort sort = findSort(analyzed);
    try {
      KeySpec.checkSupported(ScalaCollections.asJava(sort.order()));
    } catch (UnsupportedKeyException e) {
      if (conf.get(GpuSortConf.STRICT)) {
        throw new UnsupportedKeyException(e.getMessage() + " (spark.gpusort.strict=true)");
      }
      LOG.info("GpuSort falls back to Spark's sort: {}", e.getMessage());
      return sparkSorted;
    }
    sort.setTagValue(SORT_SETTINGS, settings);
    installStrategy(session);
    return Datasets.withPlan(input, analyzed);
  }

  /** The session's spark.gpusort.* settings. */
  static Map<String, String> gpusortSettings(SparkSession session) {
    return GpuSortConf.select(ScalaCollections.asJava(session.conf().getAll()));
  }


  /** The Sort that orderBy / sortWithinPartitions added: the top one, under any projection. */
  private static Sort findSort(LogicalPlan plan) {
    LogicalPlan node = plan;
    while (!(node instanceof Sort)) {
      if (node.children().size() != 1) {
        throw new IllegalStateException("no Sort found in the analyzed plan:\n" + plan);
      }
      node = node.children().head();
    }
    return (Sort) node;
  }

  /** Adds the optimizer rule for tagged sorts and the planner strategy to this session, once. */
  private static void installStrategy(SparkSession session) {
    synchronized (session) {
      scala.collection.Seq<Rule<LogicalPlan>> rules = session.experimental().extraOptimizations();
      if (ScalaCollections.asJava(rules).stream().noneMatch(r -> r instanceof GpuSortNodes)) {
        List<Rule<LogicalPlan>> updated = new java.util.ArrayList<>(ScalaCollections.asJava(rules));
        updated.add(new GpuSortNodes());
        session.experimental().extraOptimizations_$eq(ScalaCollections.list(updated));
      }
      scala.collection.Seq<SparkStrategy> strategies = session.experimental().extraStrategies();
      if (ScalaCollections.asJava(strategies).stream()
          .noneMatch(s -> s instanceof GpuSortStrategy)) {
        List<SparkStrategy> updated =
            new java.util.ArrayList<>(ScalaCollections.asJava(strategies));
        updated.add(new GpuSortStrategy());
        session.experimental().extraStrategies_$eq(ScalaCollections.list(updated));
      }
    }
  }
}
