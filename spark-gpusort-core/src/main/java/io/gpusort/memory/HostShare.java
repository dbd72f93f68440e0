package io.gpusort.memory;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Page-locked memory as a resource of the whole machine: what the machine (or the container the
 * process runs in) has, and a register that the processes of one host share, so that the arenas
 * of several executors on a host together stay within one share of its memory.
 *
 * <p>The register is a directory with one file per process holding page-locked memory (its bytes
 * and its start time), read and written under a file lock. A process that ended leaves its file
 * behind; the next reader drops it, so a killed executor's share comes back by itself.
 */
public final class HostShare {
  private static final Logger LOG = LoggerFactory.getLogger(HostShare.class);
  private static final String LOCK_FILE = "lock";

  private HostShare() {}

  /**
   * The memory this process can have: the machine's ({@code MemTotal}), or less where a cgroup
   * (a YARN container with cgroups, a Kubernetes pod, Docker) bounds it. Falls back to the JVM's
   * view of physical memory where {@code /proc} cannot be read.
   */
  public static long machineMemoryBytes() {
    long total = procMemTotal();
    if (total <= 0) {
      java.lang.management.OperatingSystemMXBean os =
          java.lang.management.ManagementFactory.getOperatingSystemMXBean();
      total = os instanceof com.sun.management.OperatingSystemMXBean sun
          ? sun.getTotalMemorySize() : Runtime.getRuntime().maxMemory();
    }
    long limit = cgroupLimitBytes();
    return limit > 0 ? Math.min(total, limit) : total;
  }

  private static long procMemTotal() {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/meminfo"))) {
        if (line.startsWith("MemTotal:")) {
          String[] parts = line.trim().split("\\s+");
          return Long.parseLong(parts[1]) << 10;
        }
      }
    } catch (IOException | RuntimeException e) {
      // Not Linux, or no /proc: the caller falls back.
    }
    return -1;
  }

  /** The memory limit of this process's cgroup (v2, else v1), or -1 where there is none. */
  static long cgroupLimitBytes() {
    for (String file : List.of("/sys/fs/cgroup/memory.max",
        "/sys/fs/cgroup/memory/memory.limit_in_bytes")) {
      try {
        String value = Files.readString(Path.of(file)).trim();
        if (value.equals("max")) {
          return -1;
        }
        long limit = Long.parseLong(value);
        // cgroup v1 writes a huge number (about 2^63) for "no limit".
        return limit > (1L << 60) ? -1 : limit;
      } catch (IOException | RuntimeException e) {
        // Try the next version's file.
      }
    }
    return -1;
  }

  /**
   * Registers this process as holding up to {@code requestBytes} of page-locked memory, within
   * {@code hostCapBytes} for every live process registered in {@code dir} together, and returns
   * what it may hold: the request, or what the others left, never negative. Where the register
   * cannot be used (no such directory can be made, no lock), it grants the request within the
   * cap and says so in the log.
   */
  public static long reserve(Path dir, long requestBytes, long hostCapBytes) {
    long request = Math.max(0, Math.min(requestBytes, hostCapBytes));
    try {
      createShared(dir);
      Path lockFile = dir.resolve(LOCK_FILE);
      boolean made = !Files.exists(lockFile);
      try (FileChannel lockChannel = FileChannel.open(lockFile,
          StandardOpenOption.CREATE, StandardOpenOption.WRITE);
          FileLock lock = lockChannel.lock()) {
        if (made) {
          shareWithAll(lockFile, "rw-rw-rw-");
        }
        long others = othersBytes(dir);
        long granted = Math.max(0, Math.min(request, hostCapBytes - others));
        Path own = dir.resolve(Long.toString(ProcessHandle.current().pid()));
        Files.writeString(own, granted + " " + startMillis(ProcessHandle.current()) + "\n",
            StandardCharsets.US_ASCII);
        return granted;
      }
    } catch (IOException | RuntimeException e) {
      LOG.warn("The host register of page-locked memory at {} cannot be used ({}); this process "
          + "takes its share without counting other processes'", dir, e.toString());
      return request;
    }
  }

  /** Drops this process's entry from {@code dir}, where it has one. */
  public static void unregister(Path dir) {
    try {
      Files.deleteIfExists(dir.resolve(Long.toString(ProcessHandle.current().pid())));
    } catch (IOException e) {
      // Another process drops the entry once it finds this one gone.
    }
  }

  /** Bytes registered by other live processes; entries of ended ones are deleted. */
  static long othersBytes(Path dir) throws IOException {
    long self = ProcessHandle.current().pid();
    long total = 0;
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
      for (Path entry : entries) {
        String name = entry.getFileName().toString();
        if (name.equals(LOCK_FILE) || !name.chars().allMatch(Character::isDigit)) {
          continue;
        }
        long pid = Long.parseLong(name);
        if (pid == self) {
          continue;
        }
        String[] fields = Files.readString(entry, StandardCharsets.US_ASCII).trim().split(" ");
        if (fields.length == 2 && alive(pid, Long.parseLong(fields[1]))) {
          total += Long.parseLong(fields[0]);
        } else {
          Files.deleteIfExists(entry);
        }
      }
    }
    return total;
  }

  /** Whether the process {@code pid} runs and is the one that started at {@code startMillis}. */
  private static boolean alive(long pid, long startMillis) {
    Optional<ProcessHandle> handle = ProcessHandle.of(pid);
    if (handle.isEmpty() || !handle.get().isAlive()) {
      return false;
    }
    long start = startMillis(handle.get());
    return start < 0 || startMillis < 0 || start == startMillis;
  }

  private static long startMillis(ProcessHandle process) {
    return process.info().startInstant().map(java.time.Instant::toEpochMilli).orElse(-1L);
  }

  /** Makes {@code dir} writable by every user of the host (executors may run as several). */
  private static void createShared(Path dir) throws IOException {
    if (Files.isDirectory(dir)) {
      return;
    }
    Files.createDirectories(dir);
    shareWithAll(dir, "rwxrwxrwx");
  }

  private static void shareWithAll(Path path, String permissions) {
    try {
      Files.setPosixFilePermissions(path, PosixFilePermissions.fromString(permissions));
    } catch (UnsupportedOperationException | IOException e) {
      // Not ours to change, or no POSIX permissions: processes of this user still share it.
    }
  }
}
