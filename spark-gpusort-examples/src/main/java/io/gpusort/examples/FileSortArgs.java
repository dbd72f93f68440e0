package io.gpusort.examples;

import io.gpusort.config.GpuSortConf;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.functions;

/**
 * The command line of {@link FileSort}, parsed and validated without touching Spark or a file
 * system, so that every mistake a user can type is reported before any work starts.
 *
 * <p>Options take their value as the next argument or after {@code =} ({@code --rows=1000}).
 */
public final class FileSortArgs {
  /** File formats read and written. */
  public static final Set<String> FORMATS = Set.of("csv", "parquet", "json", "terasort");

  /** The format of 100-byte TeraSort records; read and written only as itself. */
  static final String TERASORT = "terasort";

  static final long DEFAULT_DEMO_ROWS = 10_000_000L;

  /** Seconds between progress lines unless {@code --progress-interval} says. */
  static final double DEFAULT_PROGRESS_SECONDS = 10;

  /** The longest {@code --progress-interval}: a day. */
  private static final double MAX_PROGRESS_SECONDS = 86_400;

  /**
   * The most partitions {@code --partitions} accepts: the limit of GpuSort's output partitions,
   * checked here so that a larger number is reported as a mistake in {@code --partitions} rather
   * than as an invalid value of the internal setting it is passed on as.
   */
  static final int MAX_PARTITIONS = GpuSortConf.MAX_OUTPUT_PARTITIONS;

  public static final String USAGE = String.join("\n",
      "usage: FileSort --input PATH --format csv|parquet|json|terasort [--key SPEC] --output PATH",
      "                [--output-format csv|parquet|json|terasort] [--partitions N] [--overwrite]",
      "                [--quiet] [--progress-interval SECONDS] [--master URL] [--verbose]",
      "       FileSort --generate ROWS --output PATH [--partitions N] [--seed S] [--overwrite]",
      "                [--quiet] [--progress-interval SECONDS] [--master URL] [--verbose]",
      "       FileSort --validate PATH [--input-checksum-of PATH | --expect-checksum HEX]",
      "                [--master URL] [--verbose]",
      "       FileSort --demo [--rows N] [--partitions N] [--master URL] [--verbose]",
      "",
      "  --format F      csv, parquet, json or terasort: TeraSort's 100-byte records (a 10-byte",
      "                  key, a 90-byte value, no separators, as gensort and Hadoop's TeraGen",
      "                  write them), sorted as the BINARY columns key and value. terasort is",
      "                  read and written only as terasort; a file of it whose length is not a",
      "                  multiple of 100 bytes is an error found before reading.",
      "  --key SPEC      comma-separated keys, each col[:asc|:desc][:nulls_first|:nulls_last];",
      "                  ascending keys put nulls first and descending keys nulls last unless",
      "                  told otherwise, as in Spark. col is a top-level column name. Default",
      "                  with --format terasort: key (unsigned bytes, ascending).",
      "  --output PATH   the directory written; checked to be writable before the input is",
      "                  read, and put in place only when complete. terasort output is one file",
      "                  part-00000, part-00001, ... per partition, in order (an empty partition",
      "                  writes an empty file).",
      "  --partitions N  partitions of the sorted output (file mode), of the generated files",
      "                  (--generate), or of the generated input and the sorted output (demo);",
      "                  1 to " + MAX_PARTITIONS + ". At most " + TeraOutputFormat.MAX_FILES
          + " for terasort output, so that",
      "                  the names part-NNNNN order the files.",
      "  --overwrite     replace --output if it exists; otherwise an existing output is an error.",
      "  --quiet         print no progress lines; otherwise a long sort or generation prints a",
      "                  line every --progress-interval seconds (default "
          + (int) DEFAULT_PROGRESS_SECONDS + "): rows read, sorted",
      "                  and written, the rate and an estimate of the time left.",
      "  --master URL    Spark master; default: the one spark-submit sets, else local[*].",
      "  --verbose       on an error, print its stack trace and Spark's reports of failed tasks;",
      "                  without it, an error is one line on stderr naming the root cause.",
      "  --generate ROWS write ROWS terasort records in gensort's layout, the keys random from",
      "                  --seed S (default 0) and the row id, as --partitions files (default: one",
      "                  per core, at least one per " + TeraGen.DEFAULT_ROWS_PER_FILE / 1_000_000
          + " million records); prints their checksum.",
      "  --validate PATH check terasort files (a directory's, in name order): every record's key",
      "                  at least the one before, across files too, and whole records; prints the",
      "                  count and checksum (valsort's: the sum of every record's CRC-32). Exits",
      "                  with 1 and one line naming the first record out of order, or a checksum",
      "                  that differs from --input-checksum-of PATH's (the sort's input, read",
      "                  again) or --expect-checksum HEX (as --generate printed it).",
      "  --demo          sort generated rows with GpuSort.byKey and with Dataset.orderBy, time",
      "                  both and check that they agree (default " + DEFAULT_DEMO_ROWS + " rows).");

  /** What a command line does: sort a file, or one of the other modes its option names. */
  public enum Mode {
    SORT(null),
    DEMO("--demo"),
    GENERATE("--generate"),
    VALIDATE("--validate");

    private final String option;

    Mode(String option) {
      this.option = option;
    }
  }

  private static final Set<String> VALUE_OPTIONS = Set.of("--input", "--format", "--key",
      "--output", "--output-format", "--partitions", "--master", "--rows", "--generate", "--seed",
      "--validate", "--input-checksum-of", "--expect-checksum", "--progress-interval");
  private static final Set<String> FLAG_OPTIONS = Set.of("--overwrite", "--demo", "--help",
      "--verbose", "--quiet");
  /** Options of every mode. */
  private static final Set<String> COMMON_OPTIONS = Set.of("--master", "--verbose", "--help");
  /** Options of each mode besides {@link #COMMON_OPTIONS}, its own option included. */
  private static final Map<Mode, Set<String>> MODE_OPTIONS = new EnumMap<>(Map.of(
      Mode.SORT, Set.of("--input", "--format", "--key", "--output", "--output-format",
          "--partitions", "--overwrite", "--quiet", "--progress-interval"),
      Mode.DEMO, Set.of("--demo", "--rows", "--partitions"),
      Mode.GENERATE, Set.of("--generate", "--output", "--partitions", "--seed", "--overwrite",
          "--quiet", "--progress-interval"),
      Mode.VALIDATE, Set.of("--validate", "--input-checksum-of", "--expect-checksum")));

  /**
   * A user mistake on the command line or in what it names (a missing input, an unwritable
   * output), found before any work starts; its message is one line meant for the user.
   */
  public static final class UsageException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    UsageException(String message) {
      super(message);
    }

    UsageException(String message, Throwable cause) {
      super(message, cause);
    }
  }

  /** One sort key of {@code --key}: a top-level column, its direction and where nulls go. */
  public record KeySpec(String column, boolean descending, boolean nullsFirst) {
    /** The column itself; the name is quoted, so dots are part of the name. */
    public Column ref() {
      return functions.col("`" + column.replace("`", "``") + "`");
    }

    /** The sort order as a Spark column. */
    public Column toColumn() {
      Column c = ref();
      if (descending) {
        return nullsFirst ? c.desc_nulls_first() : c.desc_nulls_last();
      }
      return nullsFirst ? c.asc_nulls_first() : c.asc_nulls_last();
    }

    /** As Spark prints a sort order: {@code col DESC NULLS LAST}. */
    public String describe() {
      return column + (descending ? " DESC" : " ASC")
          + (nullsFirst ? " NULLS FIRST" : " NULLS LAST");
    }
  }

  private final boolean help;
  private final Mode mode;
  private final String input;
  private final String format;
  private final List<KeySpec> keys;
  private final String output;
  private final String outputFormat;
  private final int partitions;
  private final String master;
  private final boolean overwrite;
  private final long demoRows;
  private final boolean verbose;
  private final long generateRows;
  private final long seed;
  private final String validate;
  private final String inputChecksumOf;
  private final BigInteger expectChecksum;
  private final boolean quiet;
  private final long progressIntervalMillis;

  private FileSortArgs(Mode mode, Map<String, String> v) {
    this.help = v.containsKey("--help");
    this.mode = mode;
    this.input = v.get("--input");
    this.format = v.containsKey("--format") ? parseFormat("--format", v.get("--format")) : null;
    this.output = v.get("--output");
    this.outputFormat = v.containsKey("--output-format")
        ? parseFormat("--output-format", v.get("--output-format")) : format;
    checkTerasortPairing(format, outputFormat);
    this.keys = v.containsKey("--key") ? parseKeys(v.get("--key"))
        : TERASORT.equals(format) ? List.of(new KeySpec(TeraRecords.KEY_COLUMN, false, true))
        : List.of();
    boolean writesTerasort = TERASORT.equals(outputFormat) || mode == Mode.GENERATE;
    this.partitions = v.containsKey("--partitions") ? (int) parsePositive("--partitions",
        v.get("--partitions"), writesTerasort ? TeraOutputFormat.MAX_FILES : MAX_PARTITIONS) : 0;
    this.master = v.get("--master");
    this.overwrite = v.containsKey("--overwrite");
    this.demoRows = v.containsKey("--rows")
        ? parsePositive("--rows", v.get("--rows"), Long.MAX_VALUE) : DEFAULT_DEMO_ROWS;
    this.verbose = v.containsKey("--verbose");
    this.generateRows = v.containsKey("--generate")
        ? parsePositive("--generate", v.get("--generate"), Long.MAX_VALUE) : 0;
    this.seed = v.containsKey("--seed") ? parseLong("--seed", v.get("--seed")) : 0;
    this.validate = v.get("--validate");
    this.inputChecksumOf = v.get("--input-checksum-of");
    this.expectChecksum = v.containsKey("--expect-checksum")
        ? parseChecksum(v.get("--expect-checksum")) : null;
    this.quiet = v.containsKey("--quiet");
    this.progressIntervalMillis = v.containsKey("--progress-interval")
        ? parseSecondsAsMillis("--progress-interval", v.get("--progress-interval"))
        : (long) (DEFAULT_PROGRESS_SECONDS * 1000);
  }

  /** Parses {@code argv}; throws {@link UsageException} naming the first mistake. */
  public static FileSortArgs parse(String... argv) {
    Map<String, String> values = new HashMap<>();
    for (int i = 0; i < argv.length; i++) {
      String arg = argv[i];
      String name = arg;
      String value = null;
      int eq = arg.indexOf('=');
      if (arg.startsWith("--") && eq > 0) {
        name = arg.substring(0, eq);
        value = arg.substring(eq + 1);
      }
      if (FLAG_OPTIONS.contains(name)) {
        if (value != null) {
          throw new UsageException("option " + name + " takes no value");
        }
        value = "";
      } else if (VALUE_OPTIONS.contains(name)) {
        if (value == null) {
          if (i + 1 >= argv.length || isOption(argv[i + 1])) {
            throw new UsageException("option " + name + " needs a value");
          }
          value = argv[++i];
        }
      } else if (arg.startsWith("-")) {
        throw new UsageException("unknown option '" + name + "'");
      } else {
        throw new UsageException("unexpected argument '" + arg + "'");
      }
      if (values.put(name, value) != null) {
        throw new UsageException("option " + name + " is given twice");
      }
    }
    if (values.containsKey("--help")) {
      return new FileSortArgs(Mode.SORT, Map.of("--help", ""));
    }
    Mode mode = mode(values);
    checkOptionsOf(mode, values);
    checkRequired(mode, values);
    return new FileSortArgs(mode, values);
  }

  private static boolean isOption(String arg) {
    String name = arg.contains("=") ? arg.substring(0, arg.indexOf('=')) : arg;
    return VALUE_OPTIONS.contains(name) || FLAG_OPTIONS.contains(name);
  }

  /** The mode named by one of {@code --demo}, {@code --generate}, {@code --validate}, or SORT. */
  private static Mode mode(Map<String, String> values) {
    List<Mode> named = Arrays.stream(Mode.values())
        .filter(m -> m.option != null && values.containsKey(m.option)).toList();
    if (named.size() > 1) {
      throw new UsageException("options " + named.get(0).option + " and " + named.get(1).option
          + " cannot be used together");
    }
    return named.isEmpty() ? Mode.SORT : named.get(0);
  }

  private static void checkOptionsOf(Mode mode, Map<String, String> values) {
    for (String option : values.keySet()) {
      if (COMMON_OPTIONS.contains(option) || MODE_OPTIONS.get(mode).contains(option)) {
        continue;
      }
      if (mode != Mode.SORT) {
        throw new UsageException("option " + option + " is not used with " + mode.option);
      }
      String modes = MODE_OPTIONS.entrySet().stream()
          .filter(e -> e.getValue().contains(option)).map(e -> e.getKey().option)
          .collect(Collectors.joining(" or "));
      throw new UsageException("option " + option + " is only used with " + modes);
    }
  }

  private static void checkRequired(Mode mode, Map<String, String> values) {
    switch (mode) {
      case SORT -> {
        boolean terasort = TERASORT.equalsIgnoreCase(values.getOrDefault("--format", "").trim());
        for (String required : List.of("--input", "--format", "--key", "--output")) {
          if (!values.containsKey(required) && !(required.equals("--key") && terasort)) {
            throw new UsageException("missing " + required
                + " (or use --generate, --validate or --demo)");
          }
        }
      }
      case GENERATE -> {
        if (!values.containsKey("--output")) {
          throw new UsageException("missing --output for --generate");
        }
      }
      case VALIDATE -> {
        if (values.containsKey("--input-checksum-of") && values.containsKey("--expect-checksum")) {
          throw new UsageException("give --input-checksum-of or --expect-checksum, not both");
        }
      }
      case DEMO -> {
        // Every option of the demo has a default.
      }
    }
  }

  /** Terasort records are not rows of another format: they are read and written as they are. */
  private static void checkTerasortPairing(String format, String outputFormat) {
    if (format != null && TERASORT.equals(format) != TERASORT.equals(outputFormat)) {
      throw new UsageException("--format " + format + " cannot be written as --output-format "
          + outputFormat + ": terasort is read and written only as terasort");
    }
  }

  /** Parses a {@code --key} value: {@code col[:asc|:desc][:nulls_first|:nulls_last],...}. */
  public static List<KeySpec> parseKeys(String spec) {
    List<KeySpec> keys = new ArrayList<>();
    // -1 keeps trailing empty entries, so "a," is reported instead of silently read as "a".
    for (String entry : spec.split(",", -1)) {
      keys.add(parseKey(entry.trim(), spec));
    }
    return List.copyOf(keys);
  }

  private static KeySpec parseKey(String entry, String spec) {
    String[] parts = entry.split(":", -1);
    String column = parts[0].trim();
    if (column.isEmpty()) {
      throw new UsageException("malformed --key '" + spec + "': a key has no column name");
    }
    Boolean descending = null;
    Boolean nullsFirst = null;
    for (int i = 1; i < parts.length; i++) {
      String modifier = parts[i].trim().toLowerCase(Locale.ROOT);
      switch (modifier) {
        case "asc", "desc" -> {
          if (descending != null) {
            throw new UsageException("malformed --key '" + spec + "': key '" + column
                + "' has two directions");
          }
          descending = modifier.equals("desc");
        }
        case "nulls_first", "nulls_last" -> {
          if (nullsFirst != null) {
            throw new UsageException("malformed --key '" + spec + "': key '" + column
                + "' has two null orders");
          }
          nullsFirst = modifier.equals("nulls_first");
        }
        default -> throw new UsageException("malformed --key '" + spec + "': '" + parts[i]
            + "' is not one of asc, desc, nulls_first, nulls_last");
      }
    }
    boolean desc = descending != null && descending;
    // Spark's defaults: ascending puts nulls first, descending puts them last.
    return new KeySpec(column, desc, nullsFirst != null ? nullsFirst : !desc);
  }

  private static String parseFormat(String option, String value) {
    String lower = value.trim().toLowerCase(Locale.ROOT);
    if (!FORMATS.contains(lower)) {
      throw new UsageException("unsupported format '" + value + "' for " + option
          + ": expected csv, parquet, json or terasort");
    }
    return lower;
  }

  private static long parsePositive(String option, String value, long max) {
    long n;
    try {
      n = Long.parseLong(value.trim().replace("_", ""));
    } catch (NumberFormatException e) {
      throw new UsageException(option + " needs a whole number, not '" + value + "'");
    }
    if (n < 1 || n > max) {
      throw new UsageException(option + " must be between 1 and " + max + ", not " + n);
    }
    return n;
  }

  private static long parseLong(String option, String value) {
    try {
      return Long.parseLong(value.trim().replace("_", ""));
    } catch (NumberFormatException e) {
      throw new UsageException(option + " needs a whole number, not '" + value + "'");
    }
  }

  private static long parseSecondsAsMillis(String option, String value) {
    double seconds;
    try {
      seconds = Double.parseDouble(value.trim());
    } catch (NumberFormatException e) {
      throw new UsageException(option + " needs a number of seconds, not '" + value + "'");
    }
    // The negated test also refuses NaN.
    if (!(seconds >= 0.001 && seconds <= MAX_PROGRESS_SECONDS)) {
      throw new UsageException(option + " must be between 0.001 and " + (long) MAX_PROGRESS_SECONDS
          + " seconds, not " + value.trim());
    }
    return Math.round(seconds * 1000);
  }

  private static BigInteger parseChecksum(String value) {
    try {
      return TeraChecksum.parseSum(value);
    } catch (IllegalArgumentException e) {
      throw new UsageException("--expect-checksum: " + e.getMessage());
    }
  }

  public boolean help() {
    return help;
  }

  public Mode mode() {
    return mode;
  }

  public boolean demo() {
    return mode == Mode.DEMO;
  }

  public String input() {
    return input;
  }

  public String format() {
    return format;
  }

  public List<KeySpec> keys() {
    return keys;
  }

  public String output() {
    return output;
  }

  /** The format written; the input's format unless {@code --output-format} says otherwise. */
  public String outputFormat() {
    return outputFormat;
  }

  /** Partitions asked for with {@code --partitions}; 0 when not given. */
  public int partitions() {
    return partitions;
  }

  /** The {@code --master} URL, or null. */
  public String master() {
    return master;
  }

  public boolean overwrite() {
    return overwrite;
  }

  /** Rows the demo generates. */
  public long demoRows() {
    return demoRows;
  }

  /**
   * Whether {@code --verbose} was given: errors are printed with their stack traces, and Spark's
   * reports of failed tasks are not silenced.
   */
  public boolean verbose() {
    return verbose;
  }

  /** Records {@code --generate} writes; 0 in other modes. */
  public long generateRows() {
    return generateRows;
  }

  /** The generator's {@code --seed}; 0 when not given. */
  public long seed() {
    return seed;
  }

  /** The path {@code --validate} checks, or null. */
  public String validate() {
    return validate;
  }

  /** The terasort input whose checksum {@code --validate} must match, or null. */
  public String inputChecksumOf() {
    return inputChecksumOf;
  }

  /** The checksum ({@link TeraChecksum#sum()}) {@code --validate} must find, or null. */
  public BigInteger expectChecksum() {
    return expectChecksum;
  }

  /** Milliseconds between progress lines; 0 with {@code --quiet}. */
  public long progressIntervalMillis() {
    return quiet ? 0 : progressIntervalMillis;
  }
}
