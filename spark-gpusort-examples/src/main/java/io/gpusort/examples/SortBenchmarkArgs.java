package io.gpusort.examples;

import io.gpusort.config.GpuSortConf;
import io.gpusort.examples.SortBenchmark.Cases;
import io.gpusort.examples.SortBenchmark.Input;
import io.gpusort.examples.SortBenchmark.KeyShape;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The command line of {@link SortBenchmark} (its class Javadoc describes each option), parsed and
 * checked before Spark starts.
 *
 * @param rows the input sizes of the series, in the order they run (one for the busy and alone
 *     sessions)
 * @param baselineMaxRows sizes above this run the floors and GpuSort's cases only
 * @param first a substring of the label of the case that runs first in each warm-up round, or
 *     null for the usual order
 * @param aloneCase the busy session's case an alone session runs, or null
 * @param aloneJvms whether the busy session runs each case again in a JVM of its own
 * @param aloneWarmups untimed runs of a case alone before its timed ones (the first included)
 * @param stringRows rows of the busy session's string-key input
 * @param skip substrings of case labels ({@code --skip}, in any case) whose cases do not run (in
 *     the busy session: whose alone JVMs do not run)
 */
record SortBenchmarkArgs(List<Long> rows, int reps, String master, int partitions, String engine,
    Input input, String parquetDir, KeyShape keyShape, Cases cases, Map<String, String> settings,
    Map<String, Map<String, String>> variants, long baselineMaxRows, String first, Session session,
    String aloneCase, boolean aloneJvms, int aloneWarmups, long stringRows, List<String> skip) {
  static final long DEFAULT_ROWS = 10_000_000L;
  static final int DEFAULT_REPS = 5;
  /** Warm-ups of a case alone unless set: its JVM settles before the timed runs. */
  static final int DEFAULT_ALONE_WARMUPS = 3;
  /** Rows of the busy session's string-key input per row of its long-key inputs, unless set. */
  static final int STRING_ROWS_DIVISOR = 5;
  private static final int MAX_REPS = 1000;

  /** What one run of the program does. */
  enum Session {
    /** The cases of {@code --cases}, at each size of {@code --rows}. */
    CASES,
    /** Several inputs and shapes in one session, then each case alone in a JVM of its own. */
    BUSY,
    /** One case of the busy session, alone in this JVM (the busy session starts these). */
    ALONE
  }

  /** Options that only the case tables ({@code --session cases}) read. */
  private static final Set<String> CASES_ONLY = Set.of("--input", "--key", "--cases",
      "--variant", "--first", "--baseline-max-rows", "--skip");
  /** Options that only the busy and alone sessions read. */
  private static final Set<String> SESSION_ONLY = Set.of("--string-rows", "--alone-warmups");

  /**
   * The options {@code argv} gives.
   *
   * @throws IllegalArgumentException naming the option, for an unknown option, a missing or bad
   *     value, or an option the session does not read
   */
  static SortBenchmarkArgs parse(String[] argv) {
    List<Long> rows = List.of(DEFAULT_ROWS);
    long reps = DEFAULT_REPS;
    String master = null;
    long partitions = 0;
    String engine = "cpu";
    Input input = Input.CACHED;
    String parquetDir = null;
    KeyShape keyShape = KeyShape.LONG;
    Cases which = Cases.ALL;
    Map<String, String> settings = new TreeMap<>();
    Map<String, Map<String, String>> variants = new LinkedHashMap<>();
    long baselineMaxRows = Long.MAX_VALUE;
    String first = null;
    Session session = Session.CASES;
    String aloneCase = null;
    boolean aloneJvms = true;
    int aloneWarmups = DEFAULT_ALONE_WARMUPS;
    long stringRows = 0;
    List<String> skip = new java.util.ArrayList<>();
    Set<String> given = new HashSet<>();
    for (int i = 0; i < argv.length; i += 2) {
      String option = argv[i];
      if (i + 1 >= argv.length) {
        throw new IllegalArgumentException("option " + option + " needs a value");
      }
      String value = argv[i + 1];
      given.add(option);
      switch (option) {
        case "--rows" -> rows = rowCounts(option, value);
        case "--reps" -> reps = ExampleRuntime.wholeNumber(option, value, 1);
        case "--partitions" -> partitions = ExampleRuntime.wholeNumber(option, value, 1);
        case "--master" -> master = value;
        case "--engine" -> engine = GpuSortConf.ENGINE.parse(value).name().toLowerCase(Locale.ROOT);
        case "--input" -> input = choice(option, value, Input.class);
        case "--parquet-dir" -> parquetDir = value;
        case "--key" -> keyShape = choice(option, value, KeyShape.class);
        case "--cases" -> which = choice(option, value, Cases.class);
        case "--conf" -> {
          int eq = value.indexOf('=');
          if (eq <= 0) {
            throw new IllegalArgumentException("--conf needs key=value, not '" + value + "'");
          }
          settings.put(value.substring(0, eq).trim(), value.substring(eq + 1).trim());
        }
        case "--variant" -> {
          int colon = value.indexOf(':');
          variants.put(value.substring(0, Math.max(0, colon)), variantConf(value, colon));
        }
        case "--baseline-max-rows" -> baselineMaxRows = rowCount(option, value);
        case "--first" -> first = value;
        case "--session" -> session = choice(option, value, Session.class);
        case "--alone-case" -> aloneCase = value;
        case "--alone-jvms" -> aloneJvms = bool(option, value);
        case "--alone-warmups" -> aloneWarmups =
            (int) Math.min(ExampleRuntime.wholeNumber(option, value, 1), MAX_REPS);
        case "--string-rows" -> stringRows = rowCount(option, value);
        case "--skip" -> skip.add(value.toLowerCase(Locale.ROOT));
        default -> throw new IllegalArgumentException("unknown option '" + option
            + "'; options are --rows, --reps, --master, --partitions, --engine, --input, "
            + "--parquet-dir, --key, --cases, --conf, --variant, --baseline-max-rows, --first, "
            + "--session, --alone-case, --alone-jvms, --alone-warmups, --string-rows, --skip");
      }
    }
    checkSession(session, given, rows, aloneCase);
    if (which == Cases.FILE) {
      // The jobs read files: the input is written to Parquet once, whatever --input says.
      input = Input.PARQUET;
    }
    if (parquetDir != null && input != Input.PARQUET && session == Session.CASES) {
      throw new IllegalArgumentException("--parquet-dir needs --input parquet");
    }
    if (stringRows == 0) {
      stringRows = Math.max(1, rows.get(0) / STRING_ROWS_DIVISOR);
    }
    return new SortBenchmarkArgs(rows, (int) Math.min(reps, MAX_REPS), master,
        (int) Math.min(partitions, Integer.MAX_VALUE), engine, input, parquetDir, keyShape, which,
        settings, variants, baselineMaxRows, first, session, aloneCase, aloneJvms, aloneWarmups,
        stringRows, List.copyOf(skip));
  }

  /** Refuses options the session does not read, so that none is silently ignored. */
  private static void checkSession(Session session, Set<String> given, List<Long> rows,
      String aloneCase) {
    String name = "--session " + session.name().toLowerCase(Locale.ROOT);
    Set<String> unread = new HashSet<>(session == Session.CASES ? SESSION_ONLY : CASES_ONLY);
    if (session != Session.ALONE) {
      unread.add("--alone-case");
    }
    if (session != Session.BUSY) {
      unread.add("--alone-jvms");
    } else {
      // The busy session runs every case; --skip leaves cases out of its alone JVMs only.
      unread.remove("--skip");
    }
    for (String option : given) {
      if (unread.contains(option)) {
        throw new IllegalArgumentException(option + " does not apply to " + name);
      }
    }
    if (session != Session.CASES && rows.size() != 1) {
      throw new IllegalArgumentException(name + " takes one --rows size, not " + rows.size());
    }
    if (session == Session.ALONE && aloneCase == null) {
      throw new IllegalArgumentException(name + " needs --alone-case LABEL");
    }
  }

  private static Map<String, String> variantConf(String value, int colon) {
    Map<String, String> conf = new TreeMap<>();
    for (String pair : value.substring(colon + 1).split(",")) {
      int eq = pair.indexOf('=');
      if (colon <= 0 || eq <= 0) {
        throw new IllegalArgumentException(
            "--variant needs label:key=value[,key=value...], not '" + value + "'");
      }
      conf.put(pair.substring(0, eq).trim(), pair.substring(eq + 1).trim());
    }
    return conf;
  }

  /** A comma list of row counts, each as {@link #rowCount} reads it. */
  static List<Long> rowCounts(String option, String value) {
    List<Long> counts = new ArrayList<>();
    for (String part : value.split(",", -1)) {
      counts.add(rowCount(option, part));
    }
    return List.copyOf(counts);
  }

  /**
   * {@code value} of {@code option} as a whole number of at least 1: digits ({@code _} may group
   * them) or a power-of-ten notation that comes to a whole number ({@code 1e8}, {@code 2.5e6}).
   *
   * @throws IllegalArgumentException naming the option, otherwise
   */
  static long rowCount(String option, String value) {
    try {
      BigDecimal n = new BigDecimal(value.trim().replace("_", ""));
      if (n.compareTo(BigDecimal.ONE) >= 0) {
        return n.longValueExact();
      }
    } catch (NumberFormatException | ArithmeticException e) {
      // reported below with the option's name
    }
    throw new IllegalArgumentException(option + " needs whole numbers of at least 1 (such as "
        + "100000000 or 1e8), not '" + value + "'");
  }

  private static boolean bool(String option, String value) {
    return switch (value.toLowerCase(Locale.ROOT)) {
      case "true" -> true;
      case "false" -> false;
      default -> throw new IllegalArgumentException(option + " needs true or false, not '"
          + value + "'");
    };
  }

  /** The constant of {@code type} that {@code value} names, in any case. */
  private static <E extends Enum<E>> E choice(String option, String value, Class<E> type) {
    List<String> names = new ArrayList<>();
    for (E constant : type.getEnumConstants()) {
      String name = constant.name().toLowerCase(Locale.ROOT);
      if (name.equals(value.toLowerCase(Locale.ROOT))) {
        return constant;
      }
      names.add(name);
    }
    throw new IllegalArgumentException(option + " needs one of " + String.join(", ", names)
        + ", not '" + value + "'");
  }
}
