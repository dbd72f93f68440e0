package io.gpusort.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.spark.launcher.JavaModuleOptions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * A Spark standalone cluster on loopback, each part its own JVM: one master and two workers of one
 * core each, started from the Maven-resolved Spark jars (linked into a minimal SPARK_HOME, which
 * the workers need to launch executors). {@link ClusterCheck} is submitted through {@code
 * org.apache.spark.deploy.SparkSubmit} with the plugin jar ({@code spark-gpusort-core}'s shaded
 * {@code plugin} jar) in {@code --jars}, the plugin and the Kryo registrator configured and Kryo
 * registration required. The job sorts globally across both executors; this test then reads the
 * CSV it wrote, part file by part file, and checks the global order and every row.
 *
 * <p>Last, a fault drill: one worker is killed while the global sort's blocks are being read, and
 * the job must finish through Spark's retries with every row present and in order, leaving nothing
 * in the surviving worker's local directories.
 *
 * <p>Runs in the integration-test phase (after the jars are packaged), from {@code mvn verify}.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class StandaloneClusterIT {
  private static final long ROWS = 60_000;
  private static final long TIMEOUT_SECONDS = Long.getLong("gpusort.it.timeoutSeconds", 300);
  /** The Spark line and Scala version in the jars' names ({@code _spark4.2_2.13}), from Maven. */
  private static final String LINE =
      java.util.regex.Pattern.quote(System.getProperty("gpusort.it.line", "_spark4.2_2.13"));

  /** Logs and output stay here after the run (target/cluster-it), for reading when it fails. */
  private static Path work;
  private static final List<Process> DAEMONS = new ArrayList<>();
  private static Path sparkHome;
  private static int masterPort;

  @BeforeAll
  static void startCluster() throws Exception {
    work = Path.of("target", "cluster-it").toAbsolutePath();
    deleteRecursively(work);
    Files.createDirectories(work);
    sparkHome = makeSparkHome(work.resolve("spark-home"));
    masterPort = freePort();
    Process master = start("master", List.of("org.apache.spark.deploy.master.Master",
        "--host", "127.0.0.1", "--port", String.valueOf(masterPort),
        "--webui-port", String.valueOf(freePort())));
    awaitLog("master", master, "I have been elected leader");
    for (int w = 1; w <= 2; w++) {
      Path dir = Files.createDirectories(work.resolve("worker-" + w));
      Files.createDirectories(dir.resolve("local"));
      Process worker = start("worker-" + w, List.of("org.apache.spark.deploy.worker.Worker",
          "--host", "127.0.0.1", "--cores", "1", "--memory", "1g",
          "--webui-port", String.valueOf(freePort()), "--work-dir", dir.toString(),
          "spark://127.0.0.1:" + masterPort));
      awaitLog("worker-" + w, worker, "Successfully registered with master");
    }
  }

  @AfterAll
  static void stopCluster() throws InterruptedException {
    for (Process p : DAEMONS) {
      p.destroy();
    }
    for (Process p : DAEMONS) {
      if (!p.waitFor(20, TimeUnit.SECONDS)) {
        p.destroyForcibly();
      }
    }
  }

  @Test
  @Order(1)
  void submittedJobSortsGloballyAcrossBothWorkers() throws Exception {
    Path output = work.resolve("output");
    String log = submitAndWait("submit", clusterCheck(output, "2"));
    assertTrue(log.contains("CLUSTER CHECK OK"), tail(log));
    assertTrue(log.contains("GpuSortPlugin") || log.contains("spark-gpusort"), tail(log));

    // The written output, read back here: part files in partition order are globally sorted.
    assertEveryIdInOrder(readCsv(output.resolve("bykey"), 0), "bykey");
    List<long[]> sql = readCsv(output.resolve("sql"), 1);
    assertEquals(ROWS, sql.size());
    assertEquals(ROWS * (ROWS - 1) / 2, sql.stream().mapToLong(r -> r[1]).sum());
  }

  @Test
  @Order(2)
  void examplesJarRunsWithSparkSubmit() throws Exception {
    // The shaded examples jar (its own classes, the plugin's and the GPU bindings), its main
    // class from the manifest: the demo sorts generated rows with GpuSort.byKey and orderBy on
    // the cluster and compares them.
    Path examplesJar = onlyFile(Path.of("target"), "spark-gpusort-examples" + LINE + "-.*\\.jar");
    String log = submitAndWait("demo", List.of(examplesJar.toAbsolutePath().toString(), "--demo", "--rows", "20000",
        "--partitions", "4"));
    assertTrue(log.contains("check passed"), tail(log));
  }


  /**
   * ClusterCheck's fault drill: both executors hold a task of the sorted write at the gate (its
   * blocks fetched and merged), worker 2 and its executor are killed, the gate opens. The lost
   * tasks, and the map outputs that lived on the lost executor, are recomputed on worker 1; the
   * written output is then read back here and checked row by row.
   */
  @Test
  @Order(3)
  void aWorkerKilledWhileTheBlocksAreReadIsRecoveredByRetries() throws Exception {
    Path output = work.resolve("output");
    Path gate = Files.createDirectories(work.resolve("gate"));
    // Executors here share one host, whose other executors' shuffle files Spark would read
    // straight from their disk: off, so that a lost executor's outputs are lost as on a cluster.
    List<String> args = new ArrayList<>(List.of("--conf", "spark.shuffle.readHostLocalDisk=false"));
    args.addAll(clusterCheck(output, "2", gate.toString()));
    Process submit = start("submit-fault", args);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(TIMEOUT_SECONDS);
    while (startedExecutors(gate).size() < 2) {
      assertTrue(submit.isAlive() && System.nanoTime() < deadline,
          "tasks of both executors never reached the gate:\n" + log("submit-fault"));
      Thread.sleep(100);
    }
    // The machine goes, its disk with it: the map outputs it held must be computed again.
    Process worker2 = DAEMONS.get(2);
    worker2.descendants().forEach(ProcessHandle::destroyForcibly);
    worker2.destroyForcibly();
    assertTrue(worker2.waitFor(30, TimeUnit.SECONDS), "worker 2 still running");
    deleteRecursively(work.resolve("worker-2").resolve("local"));
    Files.createFile(gate.resolve("go"));

    String log = awaitExit("submit-fault", submit);
    assertTrue(log.contains("CLUSTER CHECK OK"), tail(log));
    assertTrue(log.contains("Resubmitting") || log.contains("FetchFailed"),
        "no map output was fetched in vain and computed again:\n" + tail(log));
    assertEveryIdInOrder(readCsv(output.resolve("fault"), 0), "written after a worker was lost");
    // The application's local directories (shuffle files, spills) go when it ends: the
    // surviving worker removes them once it hears so, a moment after the driver stops.
    Path local = work.resolve("worker-1").resolve("local");
    long cleanDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    List<Path> left = filesUnder(local);
    while (!left.isEmpty() && System.nanoTime() < cleanDeadline) {
      Thread.sleep(200);
      left = filesUnder(local);
    }
    assertEquals(List.of(), left, "left behind on the surviving worker");
  }

  /** {@code rows} (k, id) are in order by both and hold every id below {@link #ROWS} once. */
  private static void assertEveryIdInOrder(List<long[]> rows, String what) {
    assertEquals(ROWS, rows.size(), what + ": rows");
    for (int i = 1; i < rows.size(); i++) {
      long[] a = rows.get(i - 1);
      long[] b = rows.get(i);
      assertTrue(a[0] < b[0] || (a[0] == b[0] && a[1] < b[1]), what + ": out of order at " + i);
    }
    assertEquals(ROWS * (ROWS - 1) / 2, rows.stream().mapToLong(r -> r[1]).sum(),
        what + ": every id once");
  }

  /** Executor ids of the tasks that reached the gate. */
  private static Set<String> startedExecutors(Path gate) throws IOException {
    try (Stream<Path> files = Files.list(gate)) {
      return files.map(p -> p.getFileName().toString()).filter(n -> n.startsWith("started-"))
          .map(n -> n.substring(n.lastIndexOf('-') + 1)).collect(Collectors.toSet());
    }
  }

  /**
   * The files under {@code dir} and the applications' directories ({@code executor-*}; the
   * worker's own root directory, made once for its life, holds them).
   */
  private static List<Path> filesUnder(Path dir) throws IOException {
    try (Stream<Path> paths = Files.walk(dir)) {
      return paths.filter(p -> Files.isRegularFile(p)
          || p.getFileName().toString().startsWith("executor-")).collect(Collectors.toList());
    }
  }

  /**
   * spark-submit's arguments for ClusterCheck with the plugin jar, Kryo with registration
   * required, one core an executor; {@code checkArgs} after the output directory and rows.
   */
  private static List<String> clusterCheck(Path output, String... checkArgs) throws IOException {
    Path pluginJar = onlyFile(Path.of("../spark-gpusort-core/target"),
        "spark-gpusort-core" + LINE + "-.*-plugin\\.jar");
    // The examples' own classes (the shade step keeps them as original-*.jar): the plugin
    // reaches the cluster through the plugin jar alone.
    Path appJar = onlyFile(Path.of("target"), "original-spark-gpusort-examples" + LINE + "-.*\\.jar");
    List<String> args = new ArrayList<>(List.of(
        "--conf", "spark.plugins=io.gpusort.spark.GpuSortPlugin",
        "--conf", "spark.serializer=org.apache.spark.serializer.KryoSerializer",
        "--conf", "spark.kryo.registrationRequired=true",
        "--conf", "spark.kryo.registrator=io.gpusort.spark.GpuSortKryoRegistrator",
        "--conf", "spark.executor.cores=1",
        // Scheduling waits for both executors, so that tasks run on both workers.
        "--conf", "spark.scheduler.minRegisteredResourcesRatio=1.0",
        "--conf", "spark.scheduler.maxRegisteredResourcesWaitingTime=120s",
        // No delay scheduling: reduce tasks that prefer one executor's map output would otherwise
        // all wait for it, and the check wants both executors to sort.
        "--conf", "spark.locality.wait=0",
        "--conf", "spark.sql.shuffle.partitions=4",
        "--jars", pluginJar.toAbsolutePath().toString(),
        "--class", "io.gpusort.examples.ClusterCheck", appJar.toAbsolutePath().toString(),
        output.toString(), String.valueOf(ROWS)));
    args.addAll(List.of(checkArgs));
    return args;
  }

  /**
   * Runs spark-submit with {@code args} after the settings every submission here shares (the
   * cluster, loopback, both workers' cores, executor memory and module options) to its end; its
   * log, after checking that it exited 0 in time.
   */
  private static String submitAndWait(String name, List<String> args) throws Exception {
    return awaitExit(name, start(name, args));
  }

  /** The log of spark-submit {@code process}, after checking that it exited 0 in time. */
  private static String awaitExit(String name, Process process) throws Exception {
    boolean finished = process.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS);
    if (!finished) {
      process.destroyForcibly();
    }
    String log = log(name);
    assertTrue(finished, name + " timed out:\n" + tail(log));
    assertEquals(0, process.exitValue(), name + " failed:\n" + tail(log));
    return log;
  }

  private static String log(String name) throws IOException {
    return Files.readString(work.resolve(name + ".log"));
  }

  /** Rows of the part files in name order: (k, id) from the columns after {@code skip}. */
  private static List<long[]> readCsv(Path dir, int skip) throws IOException {
    List<Path> parts;
    try (Stream<Path> files = Files.list(dir)) {
      parts = files.filter(p -> p.getFileName().toString().startsWith("part-")).sorted()
          .collect(Collectors.toList());
    }
    List<long[]> rows = new ArrayList<>();
    for (Path part : parts) {
      for (String line : Files.readAllLines(part, StandardCharsets.UTF_8)) {
        String[] f = line.split(",");
        rows.add(new long[] {Long.parseLong(f[skip]), Long.parseLong(f[skip + 1])});
      }
    }
    return rows;
  }

  /**
   * SPARK_HOME with the test classpath's Spark jars (and their dependencies) linked into jars/,
   * and a RELEASE file, which is what Spark's launcher looks for to build executor classpaths.
   */
  private static Path makeSparkHome(Path home) throws IOException {
    Path jars = Files.createDirectories(home.resolve("jars"));
    for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
      Path p = Path.of(entry);
      String name = p.getFileName().toString();
      // Jars from the local Maven repository only: not this project's classes, not JUnit, not
      // the GPU bindings (the plugin jar brings those).
      if (name.endsWith(".jar") && !entry.contains("/io/gpusort/") && !entry.contains("target")
          && !name.startsWith("junit") && !name.startsWith("opentest4j")
          && !name.startsWith("jcuda") && !name.startsWith("lwjgl")
          && !name.startsWith("apiguardian") && !Files.exists(jars.resolve(name))) {
        Files.createSymbolicLink(jars.resolve(name), p.toAbsolutePath());
      }
    }
    Files.writeString(home.resolve("RELEASE"), "Spark (test cluster from Maven jars)\n");
    return home;
  }

  /**
   * Starts a JVM of the cluster: {@code name} "master" or "worker-N" runs {@code mainAndArgs} as
   * given (a worker with its own local directory); any other name is a spark-submit of {@code
   * mainAndArgs} after the settings every submission here shares (the cluster, loopback, both
   * workers' cores, executor memory and module options).
   */
  private static Process start(String name, List<String> mainAndArgs) throws IOException {
    boolean daemon = name.equals("master") || name.startsWith("worker-");
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-Xmx512m");
    command.addAll(Arrays.asList(JavaModuleOptions.defaultModuleOptions().split(" ")));
    command.add("-cp");
    command.add(sparkHome.resolve("jars") + File.separator + "*");
    if (!daemon) {
      command.addAll(List.of("org.apache.spark.deploy.SparkSubmit",
          "--master", "spark://127.0.0.1:" + masterPort, "--deploy-mode", "client",
          "--conf", "spark.driver.host=127.0.0.1", "--conf", "spark.driver.bindAddress=127.0.0.1",
          "--conf", "spark.ui.enabled=false", "--conf", "spark.cores.max=2",
          "--conf", "spark.executor.memory=768m",
          "--conf", "spark.executor.extraJavaOptions=" + JavaModuleOptions.defaultModuleOptions()));
    }
    command.addAll(mainAndArgs);
    ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true)
        .redirectOutput(work.resolve(name + ".log").toFile());
    Map<String, String> env = pb.environment();
    env.put("SPARK_HOME", sparkHome.toString());
    env.put("SPARK_SCALA_VERSION", "2.13");
    env.put("SPARK_LOCAL_IP", "127.0.0.1");
    env.put("JAVA_HOME", System.getProperty("java.home"));
    env.remove("SPARK_CONF_DIR");
    if (name.startsWith("worker-")) {
      // Executors' local directories (shuffle files, spills) under the worker's, for the check
      // that nothing stays behind.
      env.put("SPARK_LOCAL_DIRS", work.resolve(name).resolve("local").toString());
    }
    Process p = pb.start();
    if (daemon) {
      DAEMONS.add(p);
    }
    return p;
  }

  private static void awaitLog(String name, Process process, String line) throws Exception {
    Path log = work.resolve(name + ".log");
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
    while (System.nanoTime() < deadline) {
      if (Files.exists(log) && Files.readString(log).contains(line)) {
        return;
      }
      if (!process.isAlive()) {
        break;
      }
      Thread.sleep(200);
    }
    throw new IllegalStateException(name + " did not log '" + line + "':\n"
        + (Files.exists(log) ? tail(Files.readString(log)) : "(no log)"));
  }

  private static Path onlyFile(Path dir, String regex) throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      List<Path> found = files.filter(p -> p.getFileName().toString().matches(regex))
          .collect(Collectors.toList());
      assertEquals(1, found.size(), "files matching " + regex + " in " + dir + ": " + found);
      return found.get(0);
    }
  }

  private static void deleteRecursively(Path dir) throws IOException {
    if (Files.exists(dir)) {
      try (Stream<Path> paths = Files.walk(dir)) {
        for (Path p : paths.sorted(java.util.Comparator.reverseOrder()).collect(
            Collectors.toList())) {
          Files.delete(p);
        }
      }
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  private static String tail(String log) {
    return log.length() <= 6000 ? log : log.substring(log.length() - 6000);
  }
}
