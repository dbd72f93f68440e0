package io.gpusort.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpusort.engine.cuda.CudaEngine;
import io.gpusort.engine.vulkan.Vulkan;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** The GPU bindings' native libraries land in a private, unpredictable folder of this process. */
class NativeLibrariesTest {
  @Test
  void bindingsExtractIntoAPrivateFolder() throws IOException {
    Path folder = NativeLibraries.folder();
    assertEquals(Set.of(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE,
        PosixFilePermission.OWNER_EXECUTE), Files.getPosixFilePermissions(folder));
    String name = folder.getFileName().toString();
    assertTrue(name.startsWith("gpusort-natives-") && name.length() > "gpusort-natives-".length(),
        name);

    // Whether or not a GPU works here, both bindings extract their JNI library before loading it.
    CudaEngine.available();
    Vulkan.available();
    assertEquals(folder.toString(), System.getProperty(NativeLibraries.LWJGL_EXTRACT_PATH));
    List<String> files;
    try (Stream<Path> walk = Files.walk(folder)) {
      files = walk.map(p -> p.getFileName().toString()).collect(Collectors.toList());
    }
    assertTrue(files.stream().anyMatch(f -> f.startsWith("libJCudaDriver")), files.toString());
    assertTrue(files.contains("liblwjgl.so"), files.toString());
    assertTrue(!System.getProperty("java.io.tmpdir").equals(folder.toString()),
        "java.io.tmpdir is restored after JCuda's load");
  }
}
