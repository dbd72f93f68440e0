package io.gpusort.config;

import io.gpusort.memory.ArenaSettings;
import io.gpusort.memory.PinMethod;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;
import java.util.function.UnaryOperator;

/**
 * Every {@code spark.gpusort.*} key, declared once with its type, default, validation and doc.
 * The README's configuration table is generated from {@link #entries()} and a test checks that the
 * two agree.
 *
 * <p>An instance holds the values read for one sort: keys not set take their defaults.
 */
public final class GpuSortConf {
  private static final List<ConfEntry<?>> ENTRIES = new ArrayList<>();

  /** Which engine sorts. */
  public enum EngineChoice { AUTO, CPU, CUDA, VULKAN }

  /** Which GPU sort algorithm the CUDA engine runs. */
  public enum Algorithm {
    /** Chosen per batch from its size and key width, by measurements on the device. */
    AUTO,
    /** LSD radix sort, 8-bit digits, one pass per non-constant digit. */
    RADIX,
    /** Tiles sorted by Batcher's odd-even merge sort, then merged by merge path. */
    ODDEVEN
  }

  /** How {@code GpuSort.byKey} orders the whole dataset. */
  public enum GlobalMode {
    /** Sort each input partition, range-shuffle the sorted runs, k-way merge them on the host. */
    MERGE,
    /** Range-shuffle the rows first, then sort each output partition. */
    SORT
  }

  public static final ConfEntry<EngineChoice> ENGINE = enumEntry("spark.gpusort.engine",
      EngineChoice.class, EngineChoice.AUTO,
      "Engine that sorts: auto picks the best that works on the executor (cuda, then vulkan, then "
          + "cpu); cpu, cuda and vulkan demand that engine and fail when it is not available.");

  public static final ConfEntry<Algorithm> ALGORITHM = enumEntry("spark.gpusort.algorithm",
      Algorithm.class, Algorithm.AUTO,
      "GPU sort algorithm: radix (LSD radix, constant digits skipped), oddeven (odd-even merge "
          + "sort of tiles, then merge-path merges: the Kochi paper's hybrid) or auto, which picks "
          + "per batch by size and key width.");

  public static final ConfEntry<Integer> CUDA_DEVICE = intEntry("spark.gpusort.cuda.device", -1,
      -1, 1024,
      "CUDA device ordinal used when Spark assigned the task no GPU address; -1 means device 0.");

  public static final ConfEntry<Long> DEVICE_MEMORY_BYTES = bytesEntry(
      "spark.gpusort.cuda.memoryBudget", 0L, 0L, 1L << 44,
      "Device memory the CUDA engine may hold per device; 0 means 80% of the device's free memory "
          + "when the engine starts. A batch that needs more is sorted in device-sized pieces and "
          + "merged on the host.");

  public static final ConfEntry<Integer> CONCURRENT_GPU_TASKS = intEntry(
      "spark.gpusort.cuda.concurrentTasks", 2, 1, 1024,
      "Tasks of one executor that may sort on one GPU at the same time; others wait.");

  public static final ConfEntry<Integer> VULKAN_DEVICE = intEntry("spark.gpusort.vulkan.device",
      -1, -1, 1024,
      "Vulkan physical device index, in the order the Vulkan loader lists them, for the vulkan "
          + "engine; -1 picks the best usable hardware device (discrete first).");

  public static final ConfEntry<Boolean> VULKAN_ALLOW_SOFTWARE = booleanEntry(
      "spark.gpusort.vulkan.allowSoftware", false,
      "Whether the vulkan engine may pick a software Vulkan device (lavapipe) when choosing by "
          + "itself; auto never takes one. A device named by spark.gpusort.vulkan.device is used "
          + "whatever its type.");

  public static final ConfEntry<Boolean> VULKAN_DEBUG = booleanEntry("spark.gpusort.vulkan.debug",
      false,
      "When true, the vulkan engine enables the Khronos validation layer (where installed) and "
          + "logs its messages.");

  public static final ConfEntry<Boolean> STRICT = booleanEntry("spark.gpusort.strict", false,
      "When true, a sort key that no engine can encode (map, array, struct, variant, interval, "
          + "non-default collation, ...) is an error instead of a fallback to Spark's own sort.");

  public static final ConfEntry<Boolean> SQL_ENABLED = booleanEntry("spark.gpusort.sql.enabled",
      true, "With the SQL extension (io.gpusort.spark.GpuSortExtensions in spark.sql.extensions, "
          + "which the plugin adds), whether Spark's physical sorts (ORDER BY, sortWithinPartitions, "
          + "the sorts of sort-merge joins and windows) run on the engine where their keys are "
          + "supported; a session setting, read when a query is planned.");

  public static final ConfEntry<Long> CHUNK_BYTES = bytesEntry("spark.gpusort.chunk.maxBytes",
      32L << 20, 1L << 10, 1L << 40,
      "Largest page of rows a task's sort holds: rows are copied into pages that start at 64k and "
          + "double up to this size (a larger row gets a page of its own), page-locked where a GPU "
          + "engine runs, and each page is one copy to and from the device. The unit of transfer "
          + "and of memory requests, not of sorting: a partition is sorted by one engine call "
          + "while it fits spark.gpusort.run.maxBytes and the memory Spark grants.");

  public static final ConfEntry<Long> RUN_BYTES = bytesEntry("spark.gpusort.run.maxBytes",
      1L << 40, 1L << 10, 1L << 50,
      "Most bytes of rows and their keys sorted by one engine call: a partition larger than this "
          + "is sorted in several runs, merged by key as the output is read. Memory also ends a "
          + "run: when the task cannot get more, the runs held so far are written to local disk "
          + "(spilled) and merged back at the end. A run whose keys exceed the device's memory "
          + "budget is sorted there in pieces merged on the host; one whose rows, twice over, do "
          + "not fit it is read through the permutation instead of put in order on the device.");

  public static final ConfEntry<Boolean> GATHER_ROWS_ON_HOST = booleanEntry(
      "spark.gpusort.cpu.gatherRows", false,
      "Whether a run sorted on the CPU engine has its rows copied into sorted order on the host "
          + "(one pass through the permutation, into memory as large as the rows, counted) before "
          + "the output reads them front to back. Off by default: reading the rows through the "
          + "permutation as they are handed on does the same random reads without the copy "
          + "(BENCHMARKS.md). GPU engines put the rows in order on their device regardless.");

  public static final ConfEntry<Boolean> UPLOAD_AHEAD = booleanEntry(
      "spark.gpusort.gather.uploadAhead", true,
      "Whether, on a GPU engine, each page of rows goes to the device as soon as it is full, while "
          + "the run is still being taken in, so that the gather after the sort sends only the "
          + "last page. These copies wait for no GPU-task slot and stop (the gather then sends the "
          + "pages itself) where they would take more than half the device memory budget.");

  public static final ConfEntry<Long> STAGING_BYTES = bytesEntry(
      "spark.gpusort.gather.stagingBytes", 2L << 20, 0L, 1L << 30,
      "Host memory a task's sort on a GPU engine stages its rows through on their way to the "
          + "device, with spark.gpusort.gather.uploadAhead on: four page-locked buffers used in "
          + "turn, small enough to stay in the CPU's cache, so that a row's copy costs no write to "
          + "memory and the row pages are written only by the copy of the sorted rows back. 0 "
          + "writes the rows in their pages and sends the pages.");

  public static final ConfEntry<Boolean> STREAM_OUTPUT = booleanEntry(
      "spark.gpusort.gather.streamOutput", true,
      "Whether, on a GPU engine, the sorted rows are handed on as they come back from the device, "
          + "page by page, with the task's GPU slot given up once the copies back are under way; "
          + "off, the task holds its slot until every row is back.");

  public static final ConfEntry<Boolean> COLUMNAR_INTAKE = booleanEntry(
      "spark.gpusort.intake.columnar", true,
      "Whether a sort within partitions whose input is a columnar scan (the in-memory cache, "
          + "Parquet, ORC) with only atomic columns (numbers, dates, timestamps, decimals, strings, "
          + "binaries) takes the scan's batches and writes their rows straight into its own "
          + "memory, instead of rows Spark converts for it and it then copies. The in-memory "
          + "cache hands out batches of numeric columns only (but see "
          + "spark.gpusort.intake.cacheBatches).");

  public static final ConfEntry<Boolean> CACHE_BATCHES = booleanEntry(
      "spark.gpusort.intake.cacheBatches", true,
      "Whether, with spark.gpusort.intake.columnar on, a sort within partitions right above a "
          + "scan of the in-memory cache whose columns are numbers, strings or binaries reads the "
          + "cache's batches itself (numbers decoded by Spark's own accessor into vectors reused "
          + "batch after batch, strings and binaries copied from where they lie); off, such a "
          + "cache comes as Spark's scan hands it out: rows where it has a string or binary "
          + "column, else batches it keeps until the task ends.");

  public static final ConfEntry<GlobalMode> GLOBAL_MODE = enumEntry("spark.gpusort.global.mode",
      GlobalMode.class, GlobalMode.MERGE,
      "How a global sort orders the whole dataset: merge = the paper's split-sort-merge as one "
          + "exchange (a query stage to adaptive execution): each input partition sorted on the "
          + "engine and cut at the range bounds into one block per output partition (its rows, "
          + "see spark.gpusort.global.packRows and sendKeys), each output partition's blocks "
          + "merged by key (on a GPU engine, one sort of their keys on the device); with the SQL "
          + "extension, it also takes the place of Spark's range exchange and sort for ORDER BY. "
          + "sort = range-shuffle the rows one by one, then sort each output partition on the "
          + "engine (SQL sorts then stay above Spark's range exchange).");

  public static final ConfEntry<Boolean> PACK_ROWS = booleanEntry(
      "spark.gpusort.global.packRows", true,
      "Whether the merge mode's blocks whose rows all have one size (as rows of fixed-width "
          + "columns always do) go to the shuffle packed by column: each 8-byte word of the rows as "
          + "its first value and "
          + "the differences from one row to the next in the fewest whole bytes, which a sorted "
          + "key column, constant null bits and small numbers shrink; the shuffle's codec "
          + "compresses that. Off, the rows' bytes go as they are.");

  public static final ConfEntry<Boolean> SEND_KEYS = booleanEntry(
      "spark.gpusort.global.sendKeys", false,
      "Whether the merge mode's blocks carry each row's encoded key where a key column is a "
          + "string or binary (its first spark.gpusort.key.stringPrefixBytes, in whole words), so "
          + "that the reducer need not read the value again; off, the reducer encodes the keys "
          + "from the rows, which measured faster on a GPU than the bytes the keys add to the "
          + "shuffle. Fixed-width keys are never sent.");

  public static final ConfEntry<Boolean> DEVICE_MERGE = booleanEntry(
      "spark.gpusort.global.deviceMerge", false,
      "Whether, on a GPU engine, the merge mode's reducer merges its blocks' sorted runs on the "
          + "device (a merge-path tree, where the keys are one 64-bit word and the runs at most "
          + "1024) rather than sorting their concatenated keys there; the CPU engine merges them on "
          + "the host either way. Off by default: on the H200 both take a few milliseconds of a "
          + "reducer's second, and finding the runs costs the merge a pass over the keys on the "
          + "host (1e8 rows: 2.62 s merged against 2.55 s sorted).");

  /** The most output partitions {@link #OUTPUT_PARTITIONS} accepts. */
  public static final int MAX_OUTPUT_PARTITIONS = 1 << 20;

  public static final ConfEntry<Integer> OUTPUT_PARTITIONS = intEntry(
      "spark.gpusort.global.partitions", 0, 0, MAX_OUTPUT_PARTITIONS,
      "Number of output partitions of a global sort (byKey, and in merge mode SQL's ORDER BY "
          + "through the extension); 0 chooses from the data size: one per "
          + "spark.sql.adaptive.advisoryPartitionSizeInBytes of input, at most "
          + "spark.sql.shuffle.partitions (for ORDER BY, the count of Spark's range exchange), "
          + "which adaptive execution may then coalesce; a number set here is kept as it is.");

  public static final ConfEntry<Integer> SAMPLE_ROWS_PER_PARTITION = intEntry(
      "spark.gpusort.global.sampleRowsPerOutputPartition", 100, 1, 1 << 20,
      "Rows sampled per output partition to choose the range boundaries of byKey.");

  public static final ConfEntry<Integer> STRING_PREFIX_BYTES = intEntry(
      "spark.gpusort.key.stringPrefixBytes", 16, 1, 256,
      "Bytes of a string or binary key sorted on the engine; rows whose prefixes tie are ordered "
          + "exactly on the host.");

  public static final ConfEntry<Integer> SPILL_ROWS_THRESHOLD = intEntry(
      "spark.gpusort.spill.rowsThreshold", 0, 0, Integer.MAX_VALUE,
      "Rows a task's sort holds in memory before it writes them to disk whatever memory is left; "
          + "0 means no limit but Spark's own spark.shuffle.spill.numElementsForceSpillThreshold. "
          + "For testing and troubleshooting spills.");

  public static final ConfEntry<Long> POOL_MAX_IDLE_BYTES = bytesEntry(
      "spark.gpusort.memory.poolMaxIdleBytes", 8L << 30, 0L, 1L << 44,
      "Plain native host memory that an executor keeps idle between sorts for reuse, outside "
          + "Spark's execution memory; a buffer released beyond this is freed at once. 0 keeps "
          + "none. The page-locked arena (spark.gpusort.memory.pinned.arenaBytes) is apart: it "
          + "is kept whole while the executor lives.");

  public static final ConfEntry<Long> POOL_IDLE_TIMEOUT = timeEntry(
      "spark.gpusort.memory.poolIdleTimeout", 30_000L, 0L, 1L << 40,
      "How long an executor's idle plain native host memory is kept once no sort uses it; then "
          + "it is given back to the operating system (the page-locked arena never is).");

  public static final ConfEntry<Long> PINNED_ARENA_BYTES = bytesOrAutoEntry(
      "spark.gpusort.memory.pinned.arenaBytes",
      "Page-locked host memory an executor with a CUDA device pins once, in the background from "
          + "when the engine opens (the executor's start with the plugin, else its first sort), at "
          + "full speed while the executor runs no task and beside its tasks at a pace "
          + "(spark.gpusort.memory.pinned.busyShare), and keeps "
          + "for its sorts' pages, keys and permutations: the device moves them by DMA at bus "
          + "speed. Sorts that need more use plain memory, which goes to the device through "
          + "a few page-locked staging buffers, slower; nothing is page-locked in task time. auto: "
          + "spark.gpusort.memory.pinned.hostFraction of the machine's memory divided among its "
          + "GPUs. Every executor of a host counts its arena in one register, so that together "
          + "they stay within that fraction. Under YARN or Kubernetes the arena is also bounded by "
          + "spark.executor.memoryOverhead beyond Spark's own default overhead: raise the "
          + "overhead by the arena to have one there. Page-locked memory cannot be swapped or "
          + "used by other processes while the executor lives.");

  public static final ConfEntry<Double> PINNED_HOST_FRACTION = fractionEntry(
      "spark.gpusort.memory.pinned.hostFraction", 0.25, 0.0, 0.9,
      "The share of the machine's memory (or of its container's cgroup limit, when lower) that "
          + "the page-locked arenas of every executor on a host may pin together.");

  public static final ConfEntry<PinMethod> PINNED_METHOD = enumEntry(
      "spark.gpusort.memory.pinned.method", PinMethod.class, PinMethod.HUGEPAGES,
      "How a CUDA engine page-locks the arena. hugepages: the executor maps the memory itself, "
          + "asks for transparent huge pages, faults the pages in and then registers them with "
          + "the driver (on an H100 host 8 GiB in 0.6 s, the other threads hardly wait; a local "
          + "session's first input was ready 7-13 s sooner than with driver); where huge pages "
          + "fault in slowly (memory to be compacted first) it goes on with ordinary pages. "
          + "pages: the same on ordinary pages (4.4 GiB/s). driver: the driver allocates and "
          + "page-locks it (cuMemHostAlloc, 2.7 GiB/s), holding the process's memory map "
          + "meanwhile, so every other thread that maps memory or loads a class waits for it; "
          + "the way where the process cannot map memory itself, which the others fall back to.");

  public static final ConfEntry<Double> PINNED_REST_RATIO = fractionEntry(
      "spark.gpusort.memory.pinned.restRatio", 0.0, 0.0, 100.0,
      "How fast the arena is page-locked. 0: at full speed, two threads in 256 MiB chunks. Above "
          + "0: one thread in 64 MiB chunks, resting after each this many times as long as the "
          + "chunk took. With spark.gpusort.memory.pinned.method=driver, page-locking holds the "
          + "process's memory map, so every other thread of the executor (in local mode, the "
          + "driver too) that touches new memory or loads a class waits for it: beside a "
          + "full-speed pinning a local session took about 16 s longer to start, and with 3 its "
          + "first input was ready in half the time, but only 2 GiB were page-locked by its first "
          + "query. The other methods hold it only briefly; resting then only spreads the "
          + "faulting of pages over time.");

  public static final ConfEntry<Double> PINNED_BUSY_SHARE = fractionEntry(
      "spark.gpusort.memory.pinned.busyShare", ArenaSettings.DEFAULT_BUSY_SHARE, 0.0, 1.0,
      "While the executor runs tasks, the arena goes on being page-locked by one thread, which "
          + "spends at most this share of its time on it (resting between 256 MiB chunks); the "
          + "other pinning threads, and every thread with spark.gpusort.memory.pinned.method="
          + "driver (which holds the process's memory map), wait for the executor to be idle. 0: "
          + "page-locking only while no task runs, which in an executor that is never idle leaves "
          + "the arena short for good (a benchmark running query after query stayed at 19.75 of "
          + "31.46 GiB). On huge pages a chunk takes 20-40 ms of one thread, so the default "
          + "page-locks about 1.5-3 GiB a second beside the tasks.");

  public static final ConfEntry<String> PINNED_REGISTER_DIR = stringEntry(
      "spark.gpusort.memory.pinned.registerDir", "/tmp/spark-gpusort-pinned",
      "A local directory, the same for every executor of a host, where each executor records the "
          + "page-locked memory it holds (a file per process, dropped when the process is gone), "
          + "so that executors sharing a host share spark.gpusort.memory.pinned.hostFraction.");

  public static final ConfEntry<Boolean> WARMUP_PLANNING = booleanEntry(
      "spark.gpusort.warmup.planning", true,
      "Whether the driver, at the first use of the plugin in its JVM (the SQL extension when a "
          + "session is made, GpuSort.byKey / withinPartitions when applied), plans a few sorts "
          + "of its own on a background thread, in a session of its own and without running "
          + "them, and looks up Spark's registered data sources once, so that the first query "
          + "does not load the planner's classes on the main thread before its first task "
          + "(0.4 s on a 16-core host). No job runs.");

  public static final ConfEntry<Boolean> WARMUP_ROW_PATH = booleanEntry(
      "spark.gpusort.warmup.rowPath", true,
      "Whether a CUDA engine, once open and warmed up (the executor's start with the "
          + "plugin, else a local session's first use), runs a few seconds of sorts through "
          + "the row path on a background thread: columnar and row intake (its batches also "
          + "read back as Spark's in-memory cache holds them, and from a small Parquet file "
          + "under java.io.tmpdir, deleted after, by Spark's Parquet reader), the global "
          + "sort's map and reduce sides, on a numeric and a string key, in memory of its own, "
          + "so that the JIT compiles that code before the first query rather than while every "
          + "core runs a task. It stops once a task sorts.");

  private final Map<String, String> raw;

  private GpuSortConf(Map<String, String> raw) {
    this.raw = raw;
  }

  /** Prefix of every key this project reads. */
  public static final String PREFIX = "spark.gpusort.";

  /** The entries of {@code all} (a Spark configuration's keys and values) under {@link #PREFIX}. */
  public static Map<String, String> select(Map<String, String> all) {
    Map<String, String> selected = new java.util.HashMap<>();
    for (Map.Entry<String, String> e : all.entrySet()) {
      if (e.getKey().startsWith(PREFIX)) {
        selected.put(e.getKey(), e.getValue());
      }
    }
    return Map.copyOf(selected);
  }

  /** Reads values from {@code settings} (key to string value), validating every gpusort key set. */
  public static GpuSortConf of(Map<String, String> settings) {
    GpuSortConf conf = new GpuSortConf(Map.copyOf(settings));
    for (ConfEntry<?> entry : ENTRIES) {
      conf.get(entry);
    }
    return conf;
  }

  /** These settings with {@code entry} set to {@code value} (validated as {@link #of} does). */
  public GpuSortConf with(ConfEntry<?> entry, String value) {
    Map<String, String> settings = new java.util.HashMap<>(raw);
    settings.put(entry.key(), value);
    return of(settings);
  }

  public <T> T get(ConfEntry<T> entry) {
    return entry.parse(raw.get(entry.key()));
  }

  /** Every declared key, in declaration order. */
  public static List<ConfEntry<?>> entries() {
    return Collections.unmodifiableList(ENTRIES);
  }

  /** The README's configuration table, in Markdown. */
  public static String markdownTable() {
    StringBuilder sb = new StringBuilder();
    sb.append("| key | type | default | meaning |\n| --- | --- | --- | --- |\n");
    for (ConfEntry<?> e : ENTRIES) {
      sb.append("| `").append(e.key()).append("` | ").append(e.typeName()).append(" | `")
          .append(e.defaultString()).append("` | ").append(e.doc()).append(" |\n");
    }
    return sb.toString();
  }

  private static <T> ConfEntry<T> register(ConfEntry<T> entry) {
    ENTRIES.add(entry);
    return entry;
  }

  private static ConfEntry<Boolean> booleanEntry(String key, boolean dflt, String doc) {
    Function<String, Boolean> parse = s -> switch (s.toLowerCase(Locale.ROOT)) {
      case "true" -> true;
      case "false" -> false;
      default -> throw new IllegalArgumentException("not a boolean");
    };
    return register(new ConfEntry<>(key, "boolean", dflt, doc, parse, v -> true, "true or false",
        String::valueOf));
  }

  private static ConfEntry<Integer> intEntry(String key, int dflt, int min, int max, String doc) {
    return register(new ConfEntry<>(key, "int", dflt, doc, Integer::valueOf,
        v -> v >= min && v <= max, "an integer in [" + min + ", " + max + "]", String::valueOf));
  }

  /** A size, or {@code auto} (read as -1): a size chosen where it is used. */
  private static ConfEntry<Long> bytesOrAutoEntry(String key, String doc) {
    Function<String, Long> parse = s -> s.equalsIgnoreCase("auto") ? -1L : parseBytes(s);
    return register(new ConfEntry<>(key, "bytes or auto", -1L, doc, parse,
        v -> v >= -1 && v <= 1L << 44, "auto or a size such as 16g", v -> v < 0 ? "auto"
            : formatBytes(v)));
  }

  private static ConfEntry<Double> fractionEntry(String key, double dflt, double min, double max,
      String doc) {
    return register(new ConfEntry<>(key, "fraction", dflt, doc, Double::valueOf,
        v -> v >= min && v <= max, "a number from " + min + " to " + max, String::valueOf));
  }

  private static ConfEntry<String> stringEntry(String key, String dflt, String doc) {
    return register(new ConfEntry<>(key, "string", dflt, doc, s -> s, v -> !v.isEmpty(),
        "a non-empty string", v -> v));
  }

  private static ConfEntry<Long> bytesEntry(String key, long dflt, long min, long max, String doc) {
    return register(new ConfEntry<>(key, "bytes", dflt, doc, GpuSortConf::parseBytes,
        v -> v >= min && v <= max, "a size such as 64m or 1g, from " + min + " to " + max + " bytes",
        GpuSortConf::formatBytes));
  }

  /** A duration in milliseconds, written as Spark writes them: 500ms, 30s, 5min, 1h. */
  private static ConfEntry<Long> timeEntry(String key, long dfltMillis, long minMillis,
      long maxMillis, String doc) {
    return register(new ConfEntry<>(key, "time", dfltMillis, doc, GpuSortConf::parseMillis,
        v -> v >= minMillis && v <= maxMillis, "a duration such as 500ms, 30s or 5min",
        GpuSortConf::formatMillis));
  }

  private static <E extends Enum<E>> ConfEntry<E> enumEntry(String key, Class<E> type, E dflt,
      String doc) {
    List<String> names = new ArrayList<>();
    for (E e : type.getEnumConstants()) {
      names.add(e.name().toLowerCase(Locale.ROOT));
    }
    UnaryOperator<String> upper = s -> s.toUpperCase(Locale.ROOT);
    return register(new ConfEntry<>(key, "enum", dflt, doc,
        s -> Enum.valueOf(type, upper.apply(s)), v -> true, "one of " + String.join(", ", names),
        v -> v.name().toLowerCase(Locale.ROOT)));
  }

  /** Writes a size the way {@link #parseBytes} reads it, in the largest exact unit. */
  static String formatBytes(long bytes) {
    String[] units = {"t", "g", "m", "k"};
    int[] shifts = {40, 30, 20, 10};
    for (int i = 0; i < units.length; i++) {
      long unit = 1L << shifts[i];
      if (bytes >= unit && bytes % unit == 0) {
        return bytes / unit + units[i];
      }
    }
    return Long.toString(bytes);
  }

  /** Writes a duration the way {@link #parseMillis} reads it, in the largest exact unit. */
  static String formatMillis(long millis) {
    String[] units = {"h", "min", "s"};
    long[] sizes = {3_600_000L, 60_000L, 1000L};
    for (int i = 0; i < units.length; i++) {
      if (millis >= sizes[i] && millis % sizes[i] == 0) {
        return millis / sizes[i] + units[i];
      }
    }
    return millis + "ms";
  }

  /** Parses durations as Spark writes them: a number and ms, s, m or min, h or d; bare means ms. */
  static long parseMillis(String s) {
    String lower = s.toLowerCase(Locale.ROOT).trim();
    int split = 0;
    while (split < lower.length() && Character.isDigit(lower.charAt(split))) {
      split++;
    }
    long value = Long.parseLong(lower.substring(0, split));
    long unit = switch (lower.substring(split).trim()) {
      case "", "ms" -> 1L;
      case "s" -> 1000L;
      case "m", "min" -> 60_000L;
      case "h" -> 3_600_000L;
      case "d" -> 86_400_000L;
      default -> throw new IllegalArgumentException("unknown time unit in " + s);
    };
    return Math.multiplyExact(value, unit);
  }

  /** Parses sizes as Spark writes them: a number with an optional b, k, m, g or t suffix. */
  static long parseBytes(String s) {
    String lower = s.toLowerCase(Locale.ROOT);
    if (lower.endsWith("b") && lower.length() > 1 && !Character.isDigit(lower.charAt(lower.length() - 2))) {
      lower = lower.substring(0, lower.length() - 1);
    }
    long unit = 1;
    char last = lower.charAt(lower.length() - 1);
    switch (last) {
      case 'k' -> unit = 1L << 10;
      case 'm' -> unit = 1L << 20;
      case 'g' -> unit = 1L << 30;
      case 't' -> unit = 1L << 40;
      case 'b' -> unit = 1;
      default -> {
        return Long.parseLong(lower);
      }
    }
    return Math.multiplyExact(Long.parseLong(lower.substring(0, lower.length() - 1)), unit);
  }
}
