package io.gpusort.engine.vulkan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The host's copy of the shaders' launch parameters equals kernels/vulkan/tuning.glsl. */
class VulkanTuningTest {
  @Test
  void hostConstantsMatchTheShaders() throws IOException {
    // Surefire runs in the module directory; kernels/ is beside it.
    Path tuning = Path.of(System.getProperty("user.dir")).resolve("../kernels/vulkan/tuning.glsl")
        .normalize();
    assertTrue(Files.isRegularFile(tuning), "no " + tuning);
    Map<String, Integer> defined = new TreeMap<>();
    Matcher m = Pattern.compile("(?m)^#define (\\w+) (\\d+)\\s*$").matcher(Files.readString(tuning));
    while (m.find()) {
      defined.put(m.group(1), Integer.valueOf(m.group(2)));
    }
    // Shader-only switches: the host sizes nothing by them.
    defined.remove("RADIX_RANK_EARLY_VALS");
    Map<String, Integer> host = new TreeMap<>(Map.ofEntries(
        Map.entry("RADIX_BITS", VulkanTuning.RADIX_BITS),
        Map.entry("RADIX_THREADS", VulkanTuning.RADIX_THREADS),
        Map.entry("RADIX_ITEMS", VulkanTuning.RADIX_ITEMS),
        Map.entry("RADIX_HIST_ITEMS", VulkanTuning.RADIX_HIST_ITEMS),
        Map.entry("RADIX_SCAN_ITEMS", VulkanTuning.RADIX_SCAN_ITEMS),
        Map.entry("RADIX_RANK_ITEMS", VulkanTuning.RADIX_RANK_ITEMS),
        Map.entry("ODDEVEN_THREADS", VulkanTuning.ODDEVEN_THREADS),
        Map.entry("ODDEVEN_ITEMS", VulkanTuning.ODDEVEN_ITEMS),
        Map.entry("WORDS_THREADS", VulkanTuning.WORDS_THREADS),
        Map.entry("WORDS_ITEMS", VulkanTuning.WORDS_ITEMS)));
    assertEquals(host, defined, "VulkanTuning against " + tuning);
  }
}
