package io.gpusort.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpusort.config.GpuSortConf;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerJobStart;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.SparkPlan;
import org.junit.jupiter.api.Test;

/**
 * The driver's planning warm-up ({@link PlanningWarmup}) run in the foreground: it plans the
 * plugin's sorts (the engine's nodes in the plans of GpuSort.withinPartitions and byKey, and of
 * Spark's own sorts where the SQL extension is installed, as in the test session), starts no job
 * and leaves the user's session as it was.
 */
class PlanningWarmupTest {
  @Test
  void plansTheSortsWithoutRunningAJob() throws Exception {
    SparkSession spark = SparkTestSession.get();
    String sqlEnabled = spark.conf().get(GpuSortConf.SQL_ENABLED.key());
    int viewsBefore = spark.catalog().listTables().collectAsList().size();
    AtomicInteger jobs = new AtomicInteger();
    SparkListener listener = new SparkListener() {
      @Override
      public void onJobStart(SparkListenerJobStart jobStart) {
        jobs.incrementAndGet();
      }
    };
    spark.sparkContext().listenerBus().waitUntilEmpty();
    spark.sparkContext().addSparkListener(listener);
    List<SparkPlan> plans;
    try {
      plans = PlanningWarmup.warm(spark);
      spark.sparkContext().listenerBus().waitUntilEmpty();
    } finally {
      spark.sparkContext().removeSparkListener(listener);
    }
    assertEquals(0, jobs.get(), "jobs started by planning");
    assertEquals(4, plans.size());
    // withinPartitions, byKey, sortWithinPartitions, orderBy: each planned onto the engine.
    assertTrue(plans.get(0).toString().contains("GpuSort ["), plans.get(0).toString());
    assertTrue(plans.get(1).toString().contains("GpuRangeSortExchange ["),
        plans.get(1).toString());
    assertTrue(plans.get(2).toString().contains("GpuSort ["), plans.get(2).toString());
    assertTrue(plans.get(3).toString().contains("GpuRangeSortExchange ["),
        plans.get(3).toString());
    assertEquals(sqlEnabled, spark.conf().get(GpuSortConf.SQL_ENABLED.key()),
        "the user's session's settings changed");
    assertEquals(viewsBefore, spark.catalog().listTables().collectAsList().size());
    assertTrue(PlanningWarmup.lookUpDataSources() > 5, "Spark's built-in data sources");
  }
}
