package io.gpusort.kernels;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.regex.Pattern;

/**
 * The compiled kernels packaged in this jar, as bytes. CUDA kernel {@code name} is the fatbin
 * {@code io/gpusort/kernels/cuda/<name>.fatbin} for {@code cuModuleLoadData}, built by
 * {@code kernels/build-cuda.sh} from {@code kernels/cuda/<name>.cu} (cubin for sm_80 and sm_90,
 * PTX for compute_90 that the driver compiles for newer GPUs). Vulkan shader {@code name} is the
 * SPIR-V module {@code io/gpusort/kernels/vulkan/<name>.spv}, built by
 * {@code kernels/build-vulkan.sh} from a {@code kernels/vulkan/*.comp} source.
 *
 * <p>A kernel developer can load a local build instead, without rebuilding the jar: the system
 * property {@code gpusort.kernels.cuda.<name>} (or {@code gpusort.kernels.vulkan.<name>}) names a
 * file (cubin, PTX or fatbin; SPIR-V) that {@link #load} ({@link #loadSpirv}) then reads in place
 * of the packaged binary.
 */
public final class KernelBinaries {
  /** Classpath folder of the CUDA binaries. */
  public static final String CUDA_RESOURCE_DIR = "io/gpusort/kernels/cuda/";
  /** Prefix of the system property that overrides one kernel with a local file. */
  public static final String CUDA_OVERRIDE_PROPERTY_PREFIX = "gpusort.kernels.cuda.";
  /** Classpath folder of the Vulkan SPIR-V modules. */
  public static final String VULKAN_RESOURCE_DIR = "io/gpusort/kernels/vulkan/";
  /** Prefix of the system property that overrides one SPIR-V module with a local file. */
  public static final String VULKAN_OVERRIDE_PROPERTY_PREFIX = "gpusort.kernels.vulkan.";

  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_][A-Za-z0-9_.-]*");

  private KernelBinaries() {}

  /**
   * The bytes of CUDA kernel {@code name}: the file named by the system property
   * {@code gpusort.kernels.cuda.<name>} when that is set and not blank, else the packaged
   * {@code io/gpusort/kernels/cuda/<name>.fatbin}.
   *
   * @throws IllegalArgumentException if {@code name} is not a plain kernel name (letters, digits,
   *     {@code _ . -}; no path)
   * @throws IllegalStateException if no packaged binary of that name is on the classpath
   * @throws UncheckedIOException if the override file is missing or unreadable, or reading the
   *     packaged binary fails; the message names the file or resource
   */
  public static byte[] load(String name) {
    return load(name, CUDA_OVERRIDE_PROPERTY_PREFIX, CUDA_RESOURCE_DIR, ".fatbin",
        "CUDA kernel binary", "kernels/build-cuda.sh");
  }

  /**
   * The SPIR-V of Vulkan shader {@code name}: the file named by the system property
   * {@code gpusort.kernels.vulkan.<name>} when that is set and not blank, else the packaged
   * {@code io/gpusort/kernels/vulkan/<name>.spv}. Errors as for {@link #load}.
   */
  public static byte[] loadSpirv(String name) {
    return load(name, VULKAN_OVERRIDE_PROPERTY_PREFIX, VULKAN_RESOURCE_DIR, ".spv",
        "Vulkan SPIR-V module", "kernels/build-vulkan.sh");
  }

  private static byte[] load(String name, String propertyPrefix, String resourceDir,
      String suffix, String what, String buildScript) {
    if (name == null || !NAME.matcher(name).matches()) {
      throw new IllegalArgumentException("not a kernel name: " + name);
    }
    String property = propertyPrefix + name;
    String override = System.getProperty(property);
    if (override != null && !override.isBlank()) {
      return readOverride(property, Path.of(override.trim()));
    }
    return readResource(resourceDir + name + suffix, what, buildScript);
  }

  private static byte[] readOverride(String property, Path file) {
    try {
      return Files.readAllBytes(file);
    } catch (NoSuchFileException e) {
      throw new UncheckedIOException("kernel override -D" + property + "=" + file
          + ": no such file", e);
    } catch (IOException e) {
      throw new UncheckedIOException("kernel override -D" + property + "=" + file
          + ": cannot read it: " + e, e);
    }
  }

  private static byte[] readResource(String resource, String what, String buildScript) {
    // This class's own loader: the binaries sit in the same jar, whatever the context loader is.
    try (InputStream in = KernelBinaries.class.getClassLoader().getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException("no " + what + " " + resource + " on the classpath"
            + " (is spark-gpusort-kernels on it, and was " + buildScript + " run for it?)");
      }
      return in.readAllBytes();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + what + " " + resource + ": " + e, e);
    }
  }
}
