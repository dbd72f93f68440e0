package io.gpusort.examples;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/** FileSort command lines run in the tests' shared session, with what they print captured. */
final class FileSortRuns {
  private FileSortRuns() {}

  /** The exit code and what was printed to stdout and stderr. */
  record Result(int exitCode, String out, String err) {
    /** The context a failed assertion shows. */
    String printed() {
      return "exit " + exitCode + "\nstdout:\n" + out + "stderr:\n" + err;
    }
  }

  /** Parses {@code argv} and runs it with {@link FileSort#execute} in {@link SharedSpark}. */
  static Result execute(String... argv) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    try (PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
         PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
      int code = FileSort.execute(SharedSpark.get(), FileSortArgs.parse(argv), o, e);
      return new Result(code, out.toString(StandardCharsets.UTF_8),
          err.toString(StandardCharsets.UTF_8));
    }
  }
}
