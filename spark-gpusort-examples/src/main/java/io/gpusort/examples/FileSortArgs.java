package io.gpusort.examples;

import io.gpusort.config.GpuSortConf;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
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
  public static final Set<String> FORMATS = Set.of("csv", "parquet", "json");

  static final long DEFAULT_DEMO_ROWS = 10_000_000L;

  /**
   * The most partitions {@code --partitions} accepts: the limit of GpuSort's output partitions,
   * checked here so that a larger number is reported as a mistake in {@code --partitions} rather
   * than as an invalid value of the internal setting it is passed on as.
   */
  static final int MAX_PARTITIONS = GpuSortConf.MAX_OUTPUT_PARTITIONS;

  public static final String USAGE = String.join("\n",
      "usage: FileSort --input PATH --format csv|parquet|json --key SPEC --output PATH",
      "                [--output-format csv|parquet|json] [--partitions N] [--overwrite]",
      "                [--master URL] [--verbose]",
      "       FileSort --demo [--rows N] [--partitions N] [--master URL] [--verbose]",
      "",
      "  --key SPEC      comma-separated keys, each col[:asc|:desc][:nulls_first|:nulls_last];",
      "                  ascending keys put nulls first and descending keys nulls last unless",
      "                  told otherwise, as in Spark. col is a top-level column name.",
      "  --output PATH   the directory written; checked to be writable before the input is",
      "                  read, and put in place only when complete.",
      "  --partitions N  partitions of the sorted output (file mode), or of the generated input",
      "                  and the sorted output (demo); 1 to " + MAX_PARTITIONS + ".",
      "  --overwrite     replace --output if it exists; otherwise an existing output is an error.",
      "  --master URL    Spark master; default: the one spark-submit sets, else local[*].",
      "  --verbose       on an error, print its stack trace and Spark's reports of failed tasks;",
      "                  without it, an error is one line on stderr naming the root cause.",
      "  --demo          sort generated rows with GpuSort.byKey and with Dataset.orderBy, time",
      "                  both and check that they agree (default " + DEFAULT_DEMO_ROWS + " rows).");

  private static final Set<String> VALUE_OPTIONS = Set.of("--input", "--format", "--key",
      "--output", "--output-format", "--partitions", "--master", "--rows");
  private static final Set<String> FLAG_OPTIONS = Set.of("--overwrite", "--demo", "--help",
      "--verbose");
  private static final Set<String> FILE_MODE_ONLY = Set.of("--input", "--format", "--key",
      "--output", "--output-format", "--overwrite");

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
  private final boolean demo;
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

  private FileSortArgs(Map<String, String> v) {
    this.help = v.containsKey("--help");
    this.demo = v.containsKey("--demo");
    this.input = v.get("--input");
    this.format = v.containsKey("--format") ? parseFormat("--format", v.get("--format")) : null;
    this.keys = v.containsKey("--key") ? parseKeys(v.get("--key")) : List.of();
    this.output = v.get("--output");
    this.outputFormat = v.containsKey("--output-format")
        ? parseFormat("--output-format", v.get("--output-format")) : format;
    this.partitions = v.containsKey("--partitions")
        ? (int) parsePositive("--partitions", v.get("--partitions"), MAX_PARTITIONS) : 0;
    this.master = v.get("--master");
    this.overwrite = v.containsKey("--overwrite");
    this.demoRows = v.containsKey("--rows")
        ? parsePositive("--rows", v.get("--rows"), Long.MAX_VALUE) : DEFAULT_DEMO_ROWS;
    this.verbose = v.containsKey("--verbose");
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
      return new FileSortArgs(Map.of("--help", ""));
    }
    checkMode(values);
    return new FileSortArgs(values);
  }

  private static boolean isOption(String arg) {
    String name = arg.contains("=") ? arg.substring(0, arg.indexOf('=')) : arg;
    return VALUE_OPTIONS.contains(name) || FLAG_OPTIONS.contains(name);
  }

  private static void checkMode(Map<String, String> values) {
    if (values.containsKey("--demo")) {
      for (String option : FILE_MODE_ONLY) {
        if (values.containsKey(option)) {
          throw new UsageException("option " + option + " is not used with --demo");
        }
      }
      return;
    }
    if (values.containsKey("--rows")) {
      throw new UsageException("option --rows is only used with --demo");
    }
    for (String required : List.of("--input", "--format", "--key", "--output")) {
      if (!values.containsKey(required)) {
        throw new UsageException("missing " + required + " (or use --demo)");
      }
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
          + ": expected csv, parquet or json");
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

  public boolean help() {
    return help;
  }

  public boolean demo() {
    return demo;
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
}
