package io.gpusort.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.gpusort.config.GpuSortConf.EngineChoice;
import io.gpusort.config.GpuSortConf.GlobalMode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Checks the configuration declarations: defaults, parsing of sizes, booleans and enums, rejection
 * of invalid values with a message naming the key, and that the README's table is the one
 * generated from the declarations.
 */
class GpuSortConfTest {
  private static final String TABLE_START = "<!-- conf-table:start -->";
  private static final String TABLE_END = "<!-- conf-table:end -->";

  @Test
  void defaults() {
    GpuSortConf conf = GpuSortConf.of(Map.of());
    assertEquals(EngineChoice.AUTO, conf.get(GpuSortConf.ENGINE));
    assertEquals(false, conf.get(GpuSortConf.STRICT));
    assertEquals(32L << 20, conf.get(GpuSortConf.CHUNK_BYTES));
    assertEquals(1L << 40, conf.get(GpuSortConf.RUN_BYTES));
    assertEquals(false, conf.get(GpuSortConf.GATHER_ROWS_ON_HOST));
    assertEquals(GlobalMode.MERGE, conf.get(GpuSortConf.GLOBAL_MODE));
    assertEquals(0, conf.get(GpuSortConf.OUTPUT_PARTITIONS));
    assertEquals(100, conf.get(GpuSortConf.SAMPLE_ROWS_PER_PARTITION));
    assertEquals(16, conf.get(GpuSortConf.STRING_PREFIX_BYTES));
    for (ConfEntry<?> entry : GpuSortConf.entries()) {
      assertEquals(entry.defaultValue(), conf.get(entry), entry.key());
    }
  }

  @Test
  void declarationsAreComplete() {
    Set<String> keys = new HashSet<>();
    for (ConfEntry<?> entry : GpuSortConf.entries()) {
      assertTrue(entry.key().startsWith("spark.gpusort."), entry.key());
      assertTrue(keys.add(entry.key()), "declared twice: " + entry.key());
      assertFalse(entry.doc() == null || entry.doc().isBlank(), "no doc: " + entry.key());
      assertFalse(entry.validValues() == null || entry.validValues().isBlank(), entry.key());
      assertTrue(List.of("boolean", "int", "bytes", "bytes or auto", "fraction", "string", "time",
          "enum").contains(entry.typeName()),
          entry.key() + " has type " + entry.typeName());
      // The default, written as a user would write it, parses back to itself.
      assertEquals(entry.defaultValue(), entry.parse(entry.defaultString()), entry.key());
    }
    assertEquals(36, keys.size(), "declared keys: " + keys);
  }

  @Test
  void arenaKeys() {
    assertEquals(-1L, GpuSortConf.PINNED_ARENA_BYTES.defaultValue(), "auto by default");
    assertEquals("auto", GpuSortConf.PINNED_ARENA_BYTES.defaultString());
    assertEquals(-1L, GpuSortConf.PINNED_ARENA_BYTES.parse(" AUTO "));
    assertEquals(16L << 30, GpuSortConf.PINNED_ARENA_BYTES.parse("16g"));
    assertEquals(0L, GpuSortConf.PINNED_ARENA_BYTES.parse("0"), "0: no arena");
    assertThrows(IllegalArgumentException.class,
        () -> GpuSortConf.PINNED_ARENA_BYTES.parse("-5"));
    assertEquals(0.5, GpuSortConf.PINNED_HOST_FRACTION.parse("0.5"));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> GpuSortConf.of(Map.of(GpuSortConf.PINNED_HOST_FRACTION.key(), "1.5")));
    assertTrue(e.getMessage().contains(GpuSortConf.PINNED_HOST_FRACTION.key()), e.getMessage());
    assertThrows(IllegalArgumentException.class,
        () -> GpuSortConf.PINNED_REGISTER_DIR.parse(" "));
  }

  @Test
  void durations() {
    assertEquals(250L, GpuSortConf.parseMillis("250"));
    assertEquals(250L, GpuSortConf.parseMillis("250ms"));
    assertEquals(30_000L, GpuSortConf.parseMillis("30s"));
    assertEquals(120_000L, GpuSortConf.parseMillis("2min"));
    assertEquals(120_000L, GpuSortConf.parseMillis("2m"));
    assertEquals(3_600_000L, GpuSortConf.parseMillis("1h"));
    assertEquals("30s", GpuSortConf.formatMillis(30_000));
    assertEquals("1500ms", GpuSortConf.formatMillis(1500));
    assertEquals("2min", GpuSortConf.formatMillis(120_000));
    assertThrows(IllegalArgumentException.class,
        () -> GpuSortConf.POOL_IDLE_TIMEOUT.parse("soon"));
    assertThrows(IllegalArgumentException.class,
        () -> GpuSortConf.POOL_IDLE_TIMEOUT.parse("5 fortnights"));
  }

  @Test
  void sizes() {
    assertEquals(1024L, GpuSortConf.parseBytes("1024"));
    assertEquals(64L << 20, GpuSortConf.parseBytes("64m"));
    assertEquals(64L << 20, GpuSortConf.parseBytes("64M"));
    assertEquals(64L << 20, GpuSortConf.parseBytes("64mb"));
    assertEquals(64L << 20, GpuSortConf.parseBytes("64MB"));
    assertEquals(1L << 30, GpuSortConf.parseBytes("1g"));
    assertEquals(1L << 30, GpuSortConf.parseBytes("1gb"));
    assertEquals(2L << 10, GpuSortConf.parseBytes("2k"));
    assertEquals(3L << 40, GpuSortConf.parseBytes("3t"));
    assertEquals(100L, GpuSortConf.parseBytes("100b"));
    assertEquals(64L << 20, GpuSortConf.of(Map.of(GpuSortConf.CHUNK_BYTES.key(), " 64m "))
        .get(GpuSortConf.CHUNK_BYTES));
    assertEquals(1L << 30, GpuSortConf.of(Map.of(GpuSortConf.CHUNK_BYTES.key(), "1g"))
        .get(GpuSortConf.CHUNK_BYTES));
    assertEquals(1024L, GpuSortConf.of(Map.of(GpuSortConf.CHUNK_BYTES.key(), "1024"))
        .get(GpuSortConf.CHUNK_BYTES));
  }

  @Test
  void booleans() {
    for (String raw : List.of("true", "TRUE", "True", " true ")) {
      assertEquals(true, GpuSortConf.STRICT.parse(raw), raw);
    }
    for (String raw : List.of("false", "FALSE", "False")) {
      assertEquals(false, GpuSortConf.STRICT.parse(raw), raw);
    }
    assertEquals(true, GpuSortConf.of(Map.of(GpuSortConf.STRICT.key(), "true"))
        .get(GpuSortConf.STRICT));
  }

  @Test
  void enumsIgnoreCase() {
    assertEquals(EngineChoice.CUDA, GpuSortConf.ENGINE.parse("cuda"));
    assertEquals(EngineChoice.CUDA, GpuSortConf.ENGINE.parse("CUDA"));
    assertEquals(EngineChoice.VULKAN, GpuSortConf.ENGINE.parse("Vulkan"));
    assertEquals(EngineChoice.CPU, GpuSortConf.ENGINE.parse(" cpu "));
    assertEquals(GlobalMode.MERGE, GpuSortConf.GLOBAL_MODE.parse("mErGe"));
    assertEquals("auto", GpuSortConf.ENGINE.defaultString());
    assertEquals("one of auto, cpu, cuda, vulkan", GpuSortConf.ENGINE.validValues());
    assertEquals(GlobalMode.SORT, GpuSortConf.of(Map.of(GpuSortConf.GLOBAL_MODE.key(), "SORT"))
        .get(GpuSortConf.GLOBAL_MODE));
  }

  @Test
  void ints() {
    assertEquals(12, GpuSortConf.OUTPUT_PARTITIONS.parse("12"));
    assertEquals(1 << 20, GpuSortConf.OUTPUT_PARTITIONS.parse(String.valueOf(1 << 20)));
    assertEquals(1, GpuSortConf.STRING_PREFIX_BYTES.parse("1"));
    assertEquals(256, GpuSortConf.STRING_PREFIX_BYTES.parse("256"));
  }

  @Test
  void invalidValuesAreRejectedNamingTheKey() {
    Map<ConfEntry<?>, List<String>> invalid = Map.of(
        GpuSortConf.ENGINE, List.of("gpu", "", "cuda,cpu"),
        GpuSortConf.STRICT, List.of("yes", "1", "", "t"),
        GpuSortConf.CHUNK_BYTES, List.of("lots", "", "m", "b", "1.5g", "-1", "0", "1023", "100b",
            "2t", "9999999999999t", "64 m"),
        GpuSortConf.GLOBAL_MODE, List.of("sorted", ""),
        GpuSortConf.OUTPUT_PARTITIONS, List.of("-1", "many", "", "2.5", String.valueOf(
            (1 << 20) + 1), "99999999999"),
        GpuSortConf.SAMPLE_ROWS_PER_PARTITION, List.of("0", "-5"),
        GpuSortConf.STRING_PREFIX_BYTES, List.of("0", "257", "16b"));
    for (Map.Entry<ConfEntry<?>, List<String>> e : invalid.entrySet()) {
      String key = e.getKey().key();
      for (String raw : e.getValue()) {
        IllegalArgumentException direct = assertThrows(IllegalArgumentException.class,
            () -> e.getKey().parse(raw), key + " = '" + raw + "'");
        assertTrue(direct.getMessage().contains(key),
            "message does not name " + key + ": " + direct.getMessage());
        assertTrue(direct.getMessage().contains(e.getKey().validValues()),
            "message does not say what is valid: " + direct.getMessage());
        IllegalArgumentException viaOf = assertThrows(IllegalArgumentException.class,
            () -> GpuSortConf.of(Map.of(key, raw)), key + " = '" + raw + "'");
        assertTrue(viaOf.getMessage().contains(key),
            "message does not name " + key + ": " + viaOf.getMessage());
      }
    }
  }

  @Test
  void unknownKeysAreIgnored() {
    GpuSortConf conf = GpuSortConf.of(Map.of("spark.sql.shuffle.partitions", "not-ours"));
    assertEquals(EngineChoice.AUTO, conf.get(GpuSortConf.ENGINE));
  }

  @Test
  void markdownTableHasOneRowPerKey() {
    String[] lines = GpuSortConf.markdownTable().split("\n");
    assertEquals(2 + GpuSortConf.entries().size(), lines.length);
    for (int i = 0; i < GpuSortConf.entries().size(); i++) {
      ConfEntry<?> entry = GpuSortConf.entries().get(i);
      String row = lines[2 + i];
      assertTrue(row.startsWith("| `" + entry.key() + "` | " + entry.typeName() + " | `"
          + entry.defaultString() + "` | "), row);
      assertFalse(entry.doc().contains("|") || entry.doc().contains("\n"),
          "doc of " + entry.key() + " would break the table");
    }
  }

  @Test
  void readmeContainsTheGeneratedTable() throws IOException {
    // Surefire runs in the module directory; the README is at the repository root above it.
    Path root = Path.of(System.getProperty("user.dir")).toAbsolutePath().normalize().getParent();
    Path readme = root.resolve("README.md");
    assertTrue(Files.isRegularFile(root.resolve("pom.xml")),
        "expected the repository root above the module directory, got " + root);
    assertTrue(Files.isRegularFile(readme), "no README.md at the repository root: " + readme);
    String problem = tableProblem(Files.readString(readme, StandardCharsets.UTF_8),
        GpuSortConf.markdownTable());
    if (problem != null) {
      fail(readme + ": " + problem);
    }
  }

  @Test
  void readmeCheckFindsMissingAndStaleTables(@TempDir Path dir) throws IOException {
    String table = GpuSortConf.markdownTable();
    assertNull(tableProblem("# x\n\n" + TABLE_START + "\n" + table + TABLE_END + "\n",
        table));
    assertNull(tableProblem("# x\r\n" + TABLE_START + "\r\n\r\n"
        + table.replace("\n", "\r\n") + "\r\n" + TABLE_END + "\r\n", table));
    assertTrue(tableProblem("# x\n" + table, table).contains(TABLE_START));
    assertTrue(tableProblem(TABLE_START + "\n" + table, table).contains(TABLE_END));
    assertTrue(tableProblem(TABLE_END + "\n" + table + TABLE_START, table).contains("before"));
    String stale = table.replace("`" + GpuSortConf.STRING_PREFIX_BYTES.defaultString() + "`",
        "`8`");
    assertTrue(tableProblem(TABLE_START + "\n" + stale + TABLE_END, table).contains("differs"));
    String twice = TABLE_START + "\n" + table + TABLE_END + "\n" + TABLE_START + "\n" + table
        + TABLE_END;
    assertTrue(tableProblem(twice, table).contains("more than once"));
    // Reading back from a file keeps the result.
    Path file = dir.resolve("README.md");
    Files.writeString(file, TABLE_START + "\n" + table + TABLE_END + "\n");
    assertNull(tableProblem(Files.readString(file), table));
  }

  /**
   * What is wrong with the table between the markers of {@code readme}, or null when it is
   * {@code table} exactly (line endings normalized, blank lines next to the markers ignored).
   */
  static String tableProblem(String readme, String table) {
    String text = readme.replace("\r\n", "\n");
    int start = text.indexOf(TABLE_START);
    int end = text.indexOf(TABLE_END);
    if (start < 0) {
      return "no " + TABLE_START + " marker";
    }
    if (end < 0) {
      return "no " + TABLE_END + " marker";
    }
    if (end < start) {
      return TABLE_END + " comes before " + TABLE_START;
    }
    if (text.indexOf(TABLE_START, start + 1) >= 0 || text.indexOf(TABLE_END, end + 1) >= 0) {
      return "a conf-table marker appears more than once";
    }
    String between = text.substring(start + TABLE_START.length(), end);
    String expected = table.strip();
    String actual = between.strip();
    if (!actual.equals(expected)) {
      return "the table between the markers differs from GpuSortConf.markdownTable(); "
          + "replace it with:\n" + table + "\nfound:\n" + actual;
    }
    return null;
  }
}
