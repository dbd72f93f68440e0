package io.gpusort.config;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.spark.resource.ResourceInformation;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * conf/gpu-discovery.sh prints what Spark's resource scheduling parses (checked with Spark's own
 * parser), with a fake nvidia-smi on the PATH: the host's GPUs, none where nvidia-smi fails or is
 * missing, the visible ones under CUDA_VISIBLE_DEVICES; conf/log4j2.properties.template loads.
 */
class ConfScriptsTest {
  private static final Path CONF = Path.of(System.getProperty("user.dir")).resolve("../conf")
      .normalize();

  @TempDir
  Path bin;

  @Test
  void discoveryListsTheGpusNvidiaSmiReports() throws Exception {
    fakeNvidiaSmi("printf '0\\n1\\n2\\n'");
    ResourceInformation gpus = discover(Map.of());
    assertEquals("gpu", gpus.name());
    assertArrayEquals(new String[] {"0", "1", "2"}, gpus.addresses());
  }

  @Test
  void discoveryKeepsTheVisibleDevices() throws Exception {
    fakeNvidiaSmi("printf '0\\n1\\n2\\n3\\n'");
    // CUDA numbers the visible devices 0, 1, ... in the order given.
    assertArrayEquals(new String[] {"0", "1"},
        discover(Map.of("CUDA_VISIBLE_DEVICES", "3,1")).addresses());
  }

  @Test
  void discoveryReportsNoneCleanlyWithoutADriver() throws Exception {
    fakeNvidiaSmi("echo 'NVIDIA-SMI has failed' >&2; exit 9");
    assertArrayEquals(new String[0], discover(Map.of()).addresses());
    Files.delete(bin.resolve("nvidia-smi"));
    assertArrayEquals(new String[0], discover(Map.of()).addresses());
  }

  @Test
  void log4jTemplateNamesThePluginsLoggers() throws IOException {
    Properties p = new Properties();
    try (Reader r = Files.newBufferedReader(CONF.resolve("log4j2.properties.template"))) {
      p.load(r);
    }
    assertEquals("io.gpusort", p.getProperty("logger.gpusort.name"));
    assertEquals("info", p.getProperty("logger.gpusort.level"));
    assertEquals("console", p.getProperty("rootLogger.appenderRef.stdout.ref"));
  }

  private void fakeNvidiaSmi(String body) throws IOException {
    Path smi = bin.resolve("nvidia-smi");
    Files.writeString(smi, "#!/bin/sh\n" + body + "\n");
    Files.setPosixFilePermissions(smi, PosixFilePermissions.fromString("rwx------"));
  }

  /** Runs the script with only the fake bin folder and the system's on the PATH. */
  private ResourceInformation discover(Map<String, String> env) throws Exception {
    ProcessBuilder pb = new ProcessBuilder("bash", CONF.resolve("gpu-discovery.sh").toString());
    pb.environment().remove("CUDA_VISIBLE_DEVICES");
    pb.environment().put("PATH", bin + ":/usr/bin:/bin");
    pb.environment().putAll(env);
    Process p = pb.redirectErrorStream(false).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(30, TimeUnit.SECONDS));
    assertEquals(0, p.exitValue(), out);
    return ResourceInformation.parseJson(out.trim());
  }
}
