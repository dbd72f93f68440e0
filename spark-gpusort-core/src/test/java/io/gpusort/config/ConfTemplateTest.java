package io.gpusort.config;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** conf/spark-defaults.conf.template lists every key with its current default. */
class ConfTemplateTest {
  @Test
  void templateListsEveryKeyWithItsDefault() throws IOException {
    Path template = Path.of("..", "conf", "spark-defaults.conf.template");
    String text = Files.readString(template);
    for (ConfEntry<?> e : GpuSortConf.entries()) {
      String line = "# " + e.key() + " " + e.defaultString();
      assertTrue(text.contains(line + "\n"), template + " lacks the line: " + line);
    }
  }
}
