package io.gpusort.kernels;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.File;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * What the kernel-binary tests share: the module folder, tools on PATH, running them, digests,
 * and BUILD-INFO as the build scripts write it.
 */
final class KernelsModule {
  /** The kernels module folder (where build-cuda.sh and build-vulkan.sh are). */
  static final Path DIR = find();

  private KernelsModule() {}

  /**
   * Surefire's {@code basedir}, else found from where the test classes are
   * ({@code target/test-classes}), else the working directory or its kernels/.
   */
  private static Path find() {
    List<Path> candidates = new ArrayList<>();
    String basedir = System.getProperty("basedir");
    if (basedir != null) {
      candidates.add(Path.of(basedir));
    }
    try {
      Path classes = Path.of(KernelsModule.class.getProtectionDomain().getCodeSource()
          .getLocation().toURI());
      candidates.add(classes.getParent().getParent());
    } catch (URISyntaxException | RuntimeException e) {
      // not loaded from a folder: fall back to the working directory
    }
    Path cwd = Path.of(System.getProperty("user.dir"));
    candidates.add(cwd);
    candidates.add(cwd.resolve("kernels"));
    for (Path candidate : candidates) {
      Path pom = candidate.resolve("pom.xml");
      try {
        if (Files.isRegularFile(pom) && Files.readString(pom)
            .contains("<artifactId>spark-gpusort-kernels</artifactId>")) {
          return candidate.toAbsolutePath().normalize();
        }
      } catch (IOException e) {
        // unreadable: try the next candidate
      }
    }
    throw new IllegalStateException("cannot find the kernels module folder among " + candidates);
  }

  /** {@code override} when set (an environment variable's value), else {@code program} on PATH. */
  static Optional<String> findTool(String override, String program) {
    if (override != null && !override.isBlank()) {
      return Optional.of(override);
    }
    String path = System.getenv("PATH");
    if (path == null) {
      return Optional.empty();
    }
    for (String dir : path.split(File.pathSeparator)) {
      Path candidate = Path.of(dir.isEmpty() ? "." : dir, program);
      if (Files.isExecutable(candidate)) {
        return Optional.of(candidate.toString());
      }
    }
    return Optional.empty();
  }

  /**
   * Runs {@code command} in the module folder; its output, or an assertion failure naming it
   * when it fails or outlives {@code timeoutSeconds}.
   */
  static String run(List<String> command, long timeoutSeconds)
      throws IOException, InterruptedException {
    Path log = Files.createTempFile("kernels-module-test", ".log");
    try {
      Process process = new ProcessBuilder(command).directory(DIR.toFile())
          .redirectErrorStream(true).redirectOutput(log.toFile()).start();
      process.getOutputStream().close();
      if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        fail(String.join(" ", command) + " did not finish in " + timeoutSeconds + " s");
      }
      String output = Files.readString(log, StandardCharsets.UTF_8);
      assertEquals(0, process.exitValue(), () -> String.join(" ", command) + " failed:\n" + output);
      return output;
    } finally {
      Files.deleteIfExists(log);
    }
  }

  static String sha256(byte[] bytes) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * SHA-256 of every file in the module's {@code dir}/ (dot files aside), keyed as BUILD-INFO
   * names them ({@code dir/<file>}); empty where the folder is missing.
   */
  static Map<String, String> sourceDigests(String dir) throws IOException {
    Map<String, String> digests = new TreeMap<>();
    Path folder = DIR.resolve(dir);
    if (!Files.isDirectory(folder)) {
      return digests;
    }
    try (Stream<Path> files = Files.list(folder)) {
      for (Path file : (Iterable<Path>) files::iterator) {
        String name = file.getFileName().toString();
        if (Files.isRegularFile(file) && !name.startsWith(".")) {
          digests.put(dir + "/" + name, sha256(Files.readAllBytes(file)));
        }
      }
    }
    return digests;
  }

  /**
   * A BUILD-INFO file: its {@code key: value} lines ({@code #} comments aside) by key, in file
   * order, and its {@code source: <path> <sha256>} lines as {@code sources}.
   */
  record BuildInfoLines(Map<String, List<String>> values, Map<String, String> sources) {
    static BuildInfoLines read(Path file) throws IOException {
      Map<String, List<String>> values = new LinkedHashMap<>();
      Map<String, String> sources = new TreeMap<>();
      for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
        int colon = line.indexOf(": ");
        if (line.startsWith("#") || colon < 0) {
          continue;
        }
        String key = line.substring(0, colon);
        String value = line.substring(colon + 2).trim();
        if (key.equals("source")) {
          String[] pathAndDigest = value.split(" ");
          sources.put(pathAndDigest[0], pathAndDigest[1]);
        } else {
          values.computeIfAbsent(key, k -> new ArrayList<>()).add(value);
        }
      }
      return new BuildInfoLines(values, sources);
    }

    /** The first value of {@code key}, or null where BUILD-INFO has no such line. */
    String value(String key) {
      List<String> all = values.get(key);
      return all == null ? null : all.get(0);
    }
  }
}
