package io.gpusort.kernels;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
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
 * The committed CUDA binaries against their sources: every {@code kernels/cuda/*.cu} has its
 * fatbin and every fatbin its source, BUILD-INFO records the sources as they are now, and, where
 * the nvcc recorded in BUILD-INFO is installed, a rebuild gives the committed bytes exactly.
 * Also {@link KernelBinaries#load}: the packaged binary, the file override, the errors.
 */
class KernelBinariesTest {
  private static final Path MODULE_DIR = KernelsModule.DIR;
  private static final Path SOURCE_DIR = MODULE_DIR.resolve("cuda");
  private static final Path COMMITTED_DIR =
      MODULE_DIR.resolve("src/main/resources").resolve(KernelBinaries.CUDA_RESOURCE_DIR);
  private static final String FIX = "; run kernels/build-cuda.sh and commit its output";
  private static final long NVCC_TIMEOUT_SECONDS = 600;

  @TempDir
  Path tempDir;

  @AfterEach
  void clearOverrides() {
    System.clearProperty(KernelBinaries.CUDA_OVERRIDE_PROPERTY_PREFIX + "loader-test");
    System.clearProperty(KernelBinaries.CUDA_OVERRIDE_PROPERTY_PREFIX + "no-such-kernel");
  }

  @Test
  void everySourceHasABinaryAndEveryBinaryASource() throws IOException {
    TreeSet<String> sources = kernelNames(SOURCE_DIR, ".cu");
    TreeSet<String> binaries = kernelNames(COMMITTED_DIR, ".fatbin");
    TreeSet<String> withoutBinary = new TreeSet<>(sources);
    withoutBinary.removeAll(binaries);
    TreeSet<String> withoutSource = new TreeSet<>(binaries);
    withoutSource.removeAll(sources);
    assertTrue(withoutBinary.isEmpty(), "sources in " + SOURCE_DIR + " without a fatbin in "
        + COMMITTED_DIR + ": " + withoutBinary + FIX);
    assertTrue(withoutSource.isEmpty(), "fatbins in " + COMMITTED_DIR + " without a source in "
        + SOURCE_DIR + ": " + withoutSource + FIX);
  }

  /** A source or header edited after the last build means the committed binaries are stale. */
  @Test
  void buildInfoRecordsTheCurrentSources() throws IOException {
    Map<String, String> current = KernelsModule.sourceDigests("cuda");
    Optional<BuildInfo> info = BuildInfo.read(COMMITTED_DIR.resolve("BUILD-INFO"));
    if (info.isEmpty()) {
      assertTrue(kernelNames(SOURCE_DIR, ".cu").isEmpty(),
          "no " + COMMITTED_DIR.resolve("BUILD-INFO") + FIX);
      return;
    }
    Map<String, String> recorded = info.get().sourceDigests();
    List<String> stale = new ArrayList<>();
    TreeSet<String> files = new TreeSet<>(current.keySet());
    files.addAll(recorded.keySet());
    for (String file : files) {
      if (!recorded.containsKey(file)) {
        stale.add(file + " (new)");
      } else if (!current.containsKey(file)) {
        stale.add(file + " (removed)");
      } else if (!recorded.get(file).equals(current.get(file))) {
        stale.add(file + " (changed)");
      }
    }
    assertTrue(stale.isEmpty(), "CUDA sources differ from those the committed binaries were built"
        + " from: " + stale + FIX);
  }

  /**
   * Rebuilds every kernel with the recorded flags; skipped, with the reason, where the recorded
   * nvcc or host compiler is not the one here.
   */
  @Test
  void rebuildGivesTheCommittedBytes() throws IOException {
    Optional<BuildInfo> found = BuildInfo.read(COMMITTED_DIR.resolve("BUILD-INFO"));
    Assumptions.assumeTrue(found.isPresent(), "no BUILD-INFO: no CUDA binaries to rebuild");
    BuildInfo info = found.get();
    Optional<String> nvcc = KernelsModule.findTool(System.getenv("NVCC"), "nvcc");
    Assumptions.assumeTrue(nvcc.isPresent(), "nvcc is not on PATH and NVCC is not set");
    String nvccVersion = firstLine(List.of(nvcc.get(), "--version"), "Cuda compilation tools");
    Assumptions.assumeTrue(info.nvccVersion().equals(nvccVersion), "nvcc here (" + nvccVersion
        + ") is not the one the binaries were built with (" + info.nvccVersion() + ")");
    String hostCompiler = firstLine(List.of("gcc", "--version"), "");
    Assumptions.assumeTrue(info.hostCompiler().equals(hostCompiler), "host compiler here ("
        + hostCompiler + ") is not the one the binaries were built with (" + info.hostCompiler()
        + ")");
    assertAll(kernelNames(SOURCE_DIR, ".cu").stream()
        .map(name -> () -> checkRebuild(nvcc.get(), info, name)));
  }

  private void checkRebuild(String nvcc, BuildInfo info, String name) throws Exception {
    Path out = tempDir.resolve(name + ".fatbin");
    List<String> command = new ArrayList<>();
    command.add(nvcc);
    for (String flag : info.flags().trim().split("\\s+")) {
      command.add(flag.replace("<name>", name));
    }
    command.addAll(List.of("-o", out.toString(), "cuda/" + name + ".cu"));
    String output = KernelsModule.run(command, NVCC_TIMEOUT_SECONDS);
    byte[] rebuilt = Files.readAllBytes(out);
    byte[] committed = Files.readAllBytes(COMMITTED_DIR.resolve(name + ".fatbin"));
    if (!Arrays.equals(rebuilt, committed)) {
      fail("cuda/" + name + ".cu rebuilt (" + rebuilt.length + " bytes) differs from the committed "
          + COMMITTED_DIR.resolve(name + ".fatbin") + " (" + committed.length + " bytes), first at"
          + " byte " + Arrays.mismatch(rebuilt, committed) + FIX + "\n" + output);
    }
  }

  @Test
  void loadsThePackagedBinaryFromTheClasspath() throws IOException {
    byte[] expected;
    try (var in = getClass().getClassLoader()
        .getResourceAsStream(KernelBinaries.CUDA_RESOURCE_DIR + "loader-test.fatbin")) {
      expected = in.readAllBytes();
    }
    assertTrue(expected.length > 0);
    assertArrayEquals(expected, KernelBinaries.load("loader-test"));
  }

  @Test
  void systemPropertyNamesAFileThatIsReadInstead() throws IOException {
    byte[] local = {0x7f, 'E', 'L', 'F', 0, 1, 2, 3};
    Path file = Files.write(tempDir.resolve("local.cubin"), local);
    System.setProperty(KernelBinaries.CUDA_OVERRIDE_PROPERTY_PREFIX + "loader-test",
        file.toString());
    assertArrayEquals(local, KernelBinaries.load("loader-test"));
    // the override works for a kernel the jar does not have, too
    System.setProperty(KernelBinaries.CUDA_OVERRIDE_PROPERTY_PREFIX + "no-such-kernel",
        file.toString());
    assertArrayEquals(local, KernelBinaries.load("no-such-kernel"));
  }

  @Test
  void blankOverrideMeansThePackagedBinary() {
    System.setProperty(KernelBinaries.CUDA_OVERRIDE_PROPERTY_PREFIX + "loader-test", " ");
    assertTrue(KernelBinaries.load("loader-test").length > 0);
  }

  @Test
  void missingOverrideFileNamesTheFileAndTheProperty() {
    Path missing = tempDir.resolve("missing.fatbin");
    System.setProperty(KernelBinaries.CUDA_OVERRIDE_PROPERTY_PREFIX + "loader-test",
        missing.toString());
    UncheckedIOException e =
        assertThrows(UncheckedIOException.class, () -> KernelBinaries.load("loader-test"));
    assertTrue(e.getMessage().contains(missing.toString()), e.getMessage());
    assertTrue(e.getMessage().contains("gpusort.kernels.cuda.loader-test"), e.getMessage());
  }

  @Test
  void missingKernelNamesTheResource() {
    IllegalStateException e =
        assertThrows(IllegalStateException.class, () -> KernelBinaries.load("no-such-kernel"));
    assertTrue(e.getMessage().contains("io/gpusort/kernels/cuda/no-such-kernel.fatbin"),
        e.getMessage());
  }

  @Test
  void rejectsNamesThatAreNotPlainNames() {
    for (String name : new String[] {null, "", "../radix", "cuda/radix", "/tmp/x"}) {
      assertThrows(IllegalArgumentException.class, () -> KernelBinaries.load(name),
          String.valueOf(name));
    }
  }

  /** Names (without {@code suffix}) of the files in {@code dir} ending in {@code suffix}. */
  private static TreeSet<String> kernelNames(Path dir, String suffix) throws IOException {
    TreeSet<String> names = new TreeSet<>();
    if (Files.isDirectory(dir)) {
      try (Stream<Path> files = Files.list(dir)) {
        files.map(p -> p.getFileName().toString())
            .filter(f -> f.endsWith(suffix) && !f.startsWith("."))
            .forEach(f -> names.add(f.substring(0, f.length() - suffix.length())));
      }
    }
    return names;
  }

  /** The first output line of {@code command} that starts with {@code prefix}, or "" if none. */
  private static String firstLine(List<String> command, String prefix) {
    try {
      return KernelsModule.run(command, NVCC_TIMEOUT_SECONDS).lines().filter(l -> l.startsWith(prefix)).findFirst().orElse("");
    } catch (IOException | InterruptedException | AssertionError e) {
      return "";
    }
  }

  /** BUILD-INFO as build-cuda.sh writes it. */
  private record BuildInfo(String nvccVersion, String hostCompiler, String flags,
      Map<String, String> sourceDigests) {
    static Optional<BuildInfo> read(Path file) throws IOException {
      if (!Files.isRegularFile(file)) {
        return Optional.empty();
      }
      KernelsModule.BuildInfoLines lines = KernelsModule.BuildInfoLines.read(file);
      for (String key : List.of("nvcc", "host-compiler", "flags")) {
        if (lines.value(key) == null) {
          throw new IllegalStateException(file + " has no '" + key + ":' line" + FIX);
        }
      }
      return Optional.of(new BuildInfo(lines.value("nvcc"), lines.value("host-compiler"),
          lines.value("flags"), lines.sources()));
    }
  }
}
