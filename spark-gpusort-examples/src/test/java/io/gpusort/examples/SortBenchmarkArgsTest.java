package io.gpusort.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpusort.examples.SortBenchmarkArgs.Session;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Which sessions of {@link SortBenchmark} read which options. */
class SortBenchmarkArgsTest {
  @Test
  void theBusySessionTakesSkipForItsAloneJvms() {
    SortBenchmarkArgs args = SortBenchmarkArgs.parse(new String[] {"--session", "busy",
        "--rows", "1e6", "--skip", "Parquet long", "--skip", "String: GpuSort.byKey"});
    assertEquals(Session.BUSY, args.session());
    assertEquals(List.of("parquet long", "string: gpusort.bykey"), args.skip());
    assertEquals(200_000L, args.stringRows());
  }

  @Test
  void aCaseAloneSettlesBeforeItsTimedRunsAsSet() {
    SortBenchmarkArgs args = SortBenchmarkArgs.parse(new String[] {"--session", "busy",
        "--rows", "1e6"});
    assertEquals(SortBenchmarkArgs.DEFAULT_ALONE_WARMUPS, args.aloneWarmups());
    SortBenchmarkArgs alone = SortBenchmarkArgs.parse(new String[] {"--session", "alone",
        "--alone-case", "x", "--rows", "1e6", "--alone-warmups", "5"});
    assertEquals(5, alone.aloneWarmups());
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> SortBenchmarkArgs.parse(new String[] {"--alone-warmups", "2"}));
    assertTrue(e.getMessage().contains("--alone-warmups does not apply to --session cases"),
        e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> SortBenchmarkArgs.parse(new String[] {
        "--session", "busy", "--rows", "1e6", "--alone-warmups", "0"}));
  }

  @Test
  void anAloneSessionRefusesSkip() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> SortBenchmarkArgs.parse(new String[] {"--session", "alone", "--alone-case", "x",
            "--rows", "1e6", "--skip", "x"}));
    assertTrue(e.getMessage().contains("--skip does not apply to --session alone"),
        e.getMessage());
  }

  @Test
  void theBusySessionStillRefusesTheCaseTablesOptions() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> SortBenchmarkArgs.parse(new String[] {"--session", "busy", "--first", "x"}));
    assertTrue(e.getMessage().contains("--first does not apply"), e.getMessage());
  }
}
