package io.gpusort.kernels;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The committed SPIR-V against its sources: every variant build-vulkan.sh lists has its module
 * and every module a variant, BUILD-INFO records the sources as they are now, and, where the
 * glslc recorded in BUILD-INFO is installed (CI installs it), {@code build-vulkan.sh --check}
 * rebuilds every module and finds the committed bytes. Also {@link KernelBinaries#loadSpirv}.
 */
class VulkanBinariesTest {
  private static final Path MODULE_DIR = KernelsModule.DIR;
  private static final Path SOURCE_DIR = MODULE_DIR.resolve("vulkan");
  private static final Path COMMITTED_DIR =
      MODULE_DIR.resolve("src/main/resources").resolve(KernelBinaries.VULKAN_RESOURCE_DIR);
  private static final String FIX = "; run kernels/build-vulkan.sh and commit its output";
  private static final long GLSLC_TIMEOUT_SECONDS = 300;

  @TempDir
  Path tempDir;

  @AfterEach
  void clearOverrides() {
    System.clearProperty(KernelBinaries.VULKAN_OVERRIDE_PROPERTY_PREFIX + "radix_scan");
  }

  @Test
  void everyVariantHasAModuleAndEveryModuleAVariant() throws IOException {
    BuildInfo info = BuildInfo.read(COMMITTED_DIR.resolve("BUILD-INFO"));
    TreeSet<String> variants = new TreeSet<>(info.variants());
    TreeSet<String> modules = new TreeSet<>();
    try (Stream<Path> files = Files.list(COMMITTED_DIR)) {
      files.map(p -> p.getFileName().toString()).filter(f -> f.endsWith(".spv"))
          .forEach(f -> modules.add(f.substring(0, f.length() - 4)));
    }
    assertEquals(variants, modules, "SPIR-V modules in " + COMMITTED_DIR
        + " against the variants BUILD-INFO lists" + FIX);
    for (String name : modules) {
      byte[] spirv = Files.readAllBytes(COMMITTED_DIR.resolve(name + ".spv"));
      // SPIR-V's magic number, little-endian: what vkCreateShaderModule checks first.
      assertTrue(spirv.length > 20 && (spirv[0] & 0xFF) == 0x03 && (spirv[1] & 0xFF) == 0x02
          && (spirv[2] & 0xFF) == 0x23 && (spirv[3] & 0xFF) == 0x07, name + ".spv is not SPIR-V");
    }
  }

  /** A shader or include edited after the last build means the committed modules are stale. */
  @Test
  void buildInfoRecordsTheCurrentSources() throws IOException {
    Map<String, String> recorded = BuildInfo.read(COMMITTED_DIR.resolve("BUILD-INFO")).sources();
    Map<String, String> current = KernelsModule.sourceDigests("vulkan");
    assertEquals(recorded, current, "Vulkan sources differ from those the committed SPIR-V was"
        + " built from" + FIX);
  }

  /** Skipped, with the reason, where glslc is absent or is not the recorded version. */
  @Test
  void rebuildGivesTheCommittedBytes() throws Exception {
    BuildInfo info = BuildInfo.read(COMMITTED_DIR.resolve("BUILD-INFO"));
    Optional<String> glslc = KernelsModule.findTool(System.getenv("GLSLC"), "glslc");
    Assumptions.assumeTrue(glslc.isPresent(), "glslc is not on PATH and GLSLC is not set");
    String version = KernelsModule.run(List.of(glslc.get(), "--version"), GLSLC_TIMEOUT_SECONDS).lines().findFirst().orElse("");
    Assumptions.assumeTrue(info.glslcVersion().equals(version), "glslc here (" + version
        + ") is not the one the SPIR-V was built with (" + info.glslcVersion() + ")");
    String output = KernelsModule.run(List.of("bash",
        MODULE_DIR.resolve("build-vulkan.sh").toString(), "--check"), GLSLC_TIMEOUT_SECONDS);
    assertTrue(output.contains("committed SPIR-V matches its sources"), output);
  }

  @Test
  void loadsThePackagedModuleOrTheOverrideFile() throws IOException {
    byte[] packaged = Files.readAllBytes(COMMITTED_DIR.resolve("radix_scan.spv"));
    assertArrayEquals(packaged, KernelBinaries.loadSpirv("radix_scan"));
    byte[] local = {3, 2, 0x23, 7, 1, 2, 3, 4};
    Path file = Files.write(tempDir.resolve("local.spv"), local);
    System.setProperty(KernelBinaries.VULKAN_OVERRIDE_PROPERTY_PREFIX + "radix_scan",
        file.toString());
    assertArrayEquals(local, KernelBinaries.loadSpirv("radix_scan"));
  }

  @Test
  void missingModuleNamesTheResourceAndTheScript() {
    IllegalStateException e = org.junit.jupiter.api.Assertions.assertThrows(
        IllegalStateException.class, () -> KernelBinaries.loadSpirv("no_such_shader"));
    assertTrue(e.getMessage().contains("io/gpusort/kernels/vulkan/no_such_shader.spv")
        && e.getMessage().contains("build-vulkan.sh"), e.getMessage());
  }

  /** BUILD-INFO as build-vulkan.sh writes it. */
  private record BuildInfo(String glslcVersion, List<String> variants,
      Map<String, String> sources) {
    static BuildInfo read(Path file) throws IOException {
      assertTrue(Files.isRegularFile(file), "no " + file + FIX);
      KernelsModule.BuildInfoLines lines = KernelsModule.BuildInfoLines.read(file);
      String glslc = lines.value("glslc");
      assertTrue(glslc != null, file + " has no 'glslc:' line" + FIX);
      List<String> variants = new ArrayList<>();
      for (String variant : lines.values().getOrDefault("variant", List.of())) {
        variants.add(variant.substring(0, variant.indexOf(':')));
      }
      return new BuildInfo(glslc, variants, lines.sources());
    }
  }
}
