package io.gpusort.spark;

import io.gpusort.sql.EarlyStart;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkContext;
import org.apache.spark.SparkContext$;
import io.gpusort.sql.SortReplacement;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.SparkSessionExtensions;
import org.apache.spark.sql.SparkSessionExtensionsProvider;
import org.apache.spark.sql.catalyst.rules.Rule;
import org.apache.spark.sql.execution.ColumnarRule;
import org.apache.spark.sql.execution.SparkPlan;
import scala.runtime.AbstractFunction1;
import scala.runtime.BoxedUnit;

/**
 * The SQL side of the plugin, for {@code spark.sql.extensions} (which {@link GpuSortPlugin} sets
 * on the driver when it is missing): Spark's physical sorts run on the engine where their keys are
 * supported ({@link SortReplacement}).
 */
public final class GpuSortExtensions extends AbstractFunction1<SparkSessionExtensions, BoxedUnit>
    implements SparkSessionExtensionsProvider {
  @Override
  public BoxedUnit apply(SparkSessionExtensions extensions) {
    // A local session runs its tasks in this JVM: the engine and its memory get ready meanwhile.
    scala.Option<SparkContext> active = SparkContext$.MODULE$.getActive();
    if (active.isDefined()) {
      SparkConf conf = active.get().getConf();
      EarlyStart.forLocal(active.get(), GpuSortPlugin.settings(conf));
    }
    // Adaptive execution plans with the query-stage preparation rules (so EXPLAIN shows the
    // replacement); without it, the columnar rules are where a physical rule can run. Either
    // finds no SortExec left when the other has run.
    extensions.injectQueryStagePrepRule(new AbstractFunction1<SparkSession, Rule<SparkPlan>>() {
      @Override
      public Rule<SparkPlan> apply(SparkSession session) {
        return new SortReplacement(session);
      }
    });
    extensions.injectColumnar(new AbstractFunction1<SparkSession, ColumnarRule>() {
      @Override
      public ColumnarRule apply(SparkSession session) {
        // The first session's state is being built: its driver plans the first query soon.
        EarlyStart.forDriver(session, GpuSortPlugin.settings(session.sparkContext().getConf()));
        return new SortRule(session);
      }
    });
    return BoxedUnit.UNIT;
  }

  /** Runs the replacement before Spark inserts its row and column transitions. */
  private static final class SortRule extends ColumnarRule {
    private final SortReplacement replacement;

    SortRule(SparkSession session) {
      this.replacement = new SortReplacement(session);
    }

    @Override
    public Rule<SparkPlan> preColumnarTransitions() {
      return replacement;
    }
  }
}
