package io.gpusort.engine;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * Where the GPU bindings' native libraries are extracted: one folder per process, made by {@link
 * Files#createTempDirectory} (a random name) with owner-only permissions, and deleted at exit.
 * JCuda and LWJGL would otherwise extract into a fixed, shared path under {@code java.io.tmpdir}
 * (JCuda even loads a file already there), which another user of the machine could plant.
 *
 * <p>LWJGL takes the folder through {@code org.lwjgl.system.SharedLibraryExtractPath} (unless
 * the user set it); JCuda reads {@code java.io.tmpdir} when it extracts, so its first load runs
 * with that property pointing at the folder, then restored.
 */
public final class NativeLibraries {
  static final String LWJGL_EXTRACT_PATH = "org.lwjgl.system.SharedLibraryExtractPath";

  private static Path folder;
  private static boolean jcudaLoaded;

  private NativeLibraries() {}

  /** The process's private folder for native libraries, created on first use. */
  public static synchronized Path folder() {
    if (folder == null) {
      try {
        Path created = Files.createTempDirectory("gpusort-natives-",
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        Runtime.getRuntime().addShutdownHook(new Thread(() -> deleteQuietly(created),
            "gpusort-natives-cleanup"));
        folder = created;
      } catch (IOException e) {
        throw new UncheckedIOException("cannot create a private folder for native libraries", e);
      }
    }
    return folder;
  }

  /** Points LWJGL's extraction at the private folder, before LWJGL loads its first library. */
  public static synchronized void configureLwjgl() {
    if (System.getProperty(LWJGL_EXTRACT_PATH) == null) {
      System.setProperty(LWJGL_EXTRACT_PATH, folder().toString());
    }
  }

  /**
   * Loads JCuda's driver binding (class initialization of {@code JCudaDriver}) with its library
   * extracted into the private folder. Failures to load propagate as the LinkageError they are.
   */
  public static synchronized void loadJCuda() {
    if (jcudaLoaded) {
      return;
    }
    String tmpdir = System.getProperty("java.io.tmpdir");
    System.setProperty("java.io.tmpdir", folder().toString());
    try {
      Class.forName("jcuda.driver.JCudaDriver", true, NativeLibraries.class.getClassLoader());
      jcudaLoaded = true;
    } catch (ClassNotFoundException e) {
      throw new NoClassDefFoundError("jcuda.driver.JCudaDriver: " + e.getMessage());
    } catch (ExceptionInInitializerError e) {
      throw e.getCause() instanceof LinkageError linkage ? linkage : e;
    } finally {
      System.setProperty("java.io.tmpdir", tmpdir);
    }
  }

  private static void deleteQuietly(Path dir) {
    try (Stream<Path> paths = Files.walk(dir)) {
      paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException | UncheckedIOException ignored) {
      // best effort at exit
    }
  }
}
