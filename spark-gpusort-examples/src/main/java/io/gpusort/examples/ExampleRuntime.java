package io.gpusort.examples;

import com.sun.management.HotSpotDiagnosticMXBean;
import com.sun.management.VMOption;
import java.lang.management.ManagementFactory;
import java.util.List;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.appender.ConsoleAppender;
import org.apache.logging.log4j.core.config.Configurator;
import org.apache.logging.log4j.core.config.DefaultConfiguration;
import org.apache.logging.log4j.core.config.builder.api.ConfigurationBuilder;
import org.apache.logging.log4j.core.config.builder.api.ConfigurationBuilderFactory;
import org.apache.logging.log4j.core.config.builder.impl.BuiltConfiguration;
import org.apache.spark.SparkConf;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.storage.StorageLevel;

/** What the example programs share: the Spark session, quiet logging, and sort timing. */
final class ExampleRuntime {
  /**
   * Loggers of the Spark classes that report a failed task or job, each report with the task's
   * stack trace: the executor's "Exception in task", the scheduler's "Lost task" and "Task ...
   * failed ...; aborting job", the writers' "Aborting job". A program that reports the failure
   * itself can silence them (see {@link #quietLoggingUnlessConfigured(boolean)}).
   */
  static final List<String> TASK_FAILURE_LOGGERS = List.of(
      "org.apache.spark.executor.Executor",
      "org.apache.spark.scheduler.TaskSetManager",
      "org.apache.spark.scheduler.TaskSchedulerImpl",
      "org.apache.spark.scheduler.DAGScheduler",
      "org.apache.spark.internal.io.SparkHadoopWriter",
      "org.apache.spark.sql.execution.datasources.FileFormatWriter");

  private ExampleRuntime() {}

  /**
   * The session of an example program: {@code master} if given, else the master spark-submit
   * set, else {@code defaultMaster}.
   */
  static SparkSession createSession(String appName, String master, String defaultMaster) {
    SparkSession.Builder builder = SparkSession.builder().appName(appName);
    if (master != null) {
      builder.master(master);
    } else if (!new SparkConf().contains("spark.master")) {
      builder.master(defaultMaster);
    }
    return builder.getOrCreate();
  }

  /**
   * Logs warnings and errors only, to stderr, when nobody has configured logging: run with plain
   * {@code java}, Spark would otherwise print hundreds of INFO lines around the program's output.
   * Under spark-submit, or with {@code -Dlog4j2.configurationFile}, logging is left as configured.
   */
  static void quietLoggingUnlessConfigured() {
    quietLoggingUnlessConfigured(true);
  }

  /**
   * As {@link #quietLoggingUnlessConfigured()}; unless {@code logTaskFailures}, the
   * {@link #TASK_FAILURE_LOGGERS} are also turned off, for a program that reports a failed job
   * itself and would otherwise have its one-line error buried under the same failure's stack
   * traces, repeated by every Spark class it passes through. Logging that was configured is
   * never changed.
   */
  static void quietLoggingUnlessConfigured(boolean logTaskFailures) {
    if (System.getProperty("log4j2.configurationFile") != null
        || System.getProperty("log4j.configurationFile") != null) {
      return;
    }
    if (!(LogManager.getContext(false) instanceof LoggerContext context)
        || !(context.getConfiguration() instanceof DefaultConfiguration)) {
      return;
    }
    // Spark replaces a configuration that still looks like log4j's default; this one does not.
    Configurator.reconfigure(quietConfiguration(logTaskFailures));
  }

  /**
   * The configuration {@link #quietLoggingUnlessConfigured(boolean)} installs: warnings and
   * errors to stderr, host startup warnings and, unless {@code logTaskFailures}, the
   * {@link #TASK_FAILURE_LOGGERS} off.
   */
  static BuiltConfiguration quietConfiguration(boolean logTaskFailures) {
    ConfigurationBuilder<BuiltConfiguration> b =
        ConfigurationBuilderFactory.newConfigurationBuilder();
    b.add(b.newAppender("stderr", "Console")
        .addAttribute("target", ConsoleAppender.Target.SYSTEM_ERR)
        .add(b.newLayout("PatternLayout")
            .addAttribute("pattern", "%d{HH:mm:ss} %p %c{1}: %m%n%ex")));
    b.add(b.newRootLogger(Level.WARN).add(b.newAppenderRef("stderr")));
    // Startup warnings about the host (no native Hadoop library, hostname resolving to loopback,
    // UI port taken), which say nothing about the program's result.
    b.add(b.newLogger("org.apache.hadoop.util.NativeCodeLoader", Level.ERROR));
    b.add(b.newLogger("org.apache.spark.util.Utils", Level.ERROR));
    if (!logTaskFailures) {
      for (String logger : TASK_FAILURE_LOGGERS) {
        b.add(b.newLogger(logger, Level.OFF));
      }
    }
    return b.build();
  }

  /**
   * Caches {@code data} (memory, then disk) and computes it, so that timed sorts read it from the
   * cache. The cache is not compressed: compressing costs several times the generation here and
   * saves memory that these examples do not need.
   */
  static <T> Dataset<T> cacheUncompressed(SparkSession spark, Dataset<T> data) {
    String key = "spark.sql.inMemoryColumnarStorage.compressed";
    String previous = spark.conf().get(key);
    spark.conf().set(key, "false");
    try {
      Dataset<T> cached = data.persist(StorageLevel.MEMORY_AND_DISK());
      cached.count();
      return cached;
    } finally {
      spark.conf().set(key, previous);
    }
  }

  /**
   * Runs {@code sorted} to completion and returns the wall time in nanoseconds. A noop write
   * produces every row in order; a {@code count()} would let Spark drop the sort.
   */
  static long timeNoopWriteNanos(Dataset<?> sorted) {
    long start = System.nanoTime();
    sorted.write().format("noop").mode("overwrite").save();
    return System.nanoTime() - start;
  }

  /**
   * {@code value} of a benchmark's {@code option} as a whole number of at least {@code min}
   * ({@code _} may group digits).
   *
   * @throws IllegalArgumentException naming the option, otherwise
   */
  static long wholeNumber(String option, String value, long min) {
    try {
      long n = Long.parseLong(value.replace("_", ""));
      if (n >= min) {
        return n;
      }
    } catch (NumberFormatException e) {
      // reported below with the option's name
    }
    throw new IllegalArgumentException(option + " needs a whole number of at least " + min
        + ", not '" + value + "'");
  }

  /** The median of {@code values} (the mean of the middle two for an even count). */
  static double median(double[] values) {
    double[] sorted = values.clone();
    java.util.Arrays.sort(sorted);
    int n = sorted.length;
    return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  }

  /**
   * Has the JVM keep its heap's committed size through full collections, as a JVM running one
   * query after another does, and returns a line saying what was done. A benchmark collects
   * garbage before each timed run; G1 then gives back all but {@code MaxHeapFreeRatio} (70%) of
   * the free heap, so in a JVM holding little (one case alone, Parquet input) every run started
   * on a heap shrunk to under 1 GB and paid for growing it again: fresh memory faulted in while
   * the input was read, and more young collections (H100 host, 2026-12-06: the heap went from
   * 3.8 GB to 0.6-1.2 GB at each run's collection). A setting given on the command line is kept.
   */
  static String keepHeapThroughCollections() {
    String option = "MaxHeapFreeRatio";
    try {
      HotSpotDiagnosticMXBean vm = ManagementFactory.getPlatformMXBean(
          HotSpotDiagnosticMXBean.class);
      VMOption current = vm.getVMOption(option);
      if (current.getOrigin() != VMOption.Origin.DEFAULT) {
        return "heap: -XX:" + option + "=" + current.getValue() + " as given";
      }
      vm.setVMOption(option, "100");
      return "heap: kept at its committed size through the collection before each run (-XX:"
          + option + "=100, was " + current.getValue() + ")";
    } catch (RuntimeException e) {
      // No such bean or option in this JVM, or not writable: the JVM's own sizing stays.
      return "heap: the JVM's own sizing (" + option + " not settable: " + e.getMessage() + ")";
    }
  }

  static double seconds(long nanos) {
    return nanos / 1e9;
  }
}
