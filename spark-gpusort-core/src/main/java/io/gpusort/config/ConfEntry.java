package io.gpusort.config;

import java.util.Objects;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * One configuration key: its name, type, default, validation and documentation, declared once in
 * {@link GpuSortConf}. Values are read from strings (Spark's session or application configuration)
 * and rejected with a message naming the key when they do not parse or validate.
 */
public final class ConfEntry<T> {
  private final String key;
  private final String typeName;
  private final T defaultValue;
  private final String doc;
  private final Function<String, T> parser;
  private final Predicate<T> validator;
  private final String validValues;
  private final Function<T, String> formatter;

  ConfEntry(String key, String typeName, T defaultValue, String doc, Function<String, T> parser,
      Predicate<T> validator, String validValues, Function<T, String> formatter) {
    this.key = Objects.requireNonNull(key);
    this.typeName = typeName;
    this.defaultValue = defaultValue;
    this.doc = doc;
    this.parser = parser;
    this.validator = validator;
    this.validValues = validValues;
    this.formatter = formatter;
  }

  public String key() {
    return key;
  }

  /** The type as shown in the README table: boolean, int, bytes, enum, ... */
  public String typeName() {
    return typeName;
  }

  public T defaultValue() {
    return defaultValue;
  }

  /** The default as a user would write it in a configuration file. */
  public String defaultString() {
    return formatter.apply(defaultValue);
  }

  public String doc() {
    return doc;
  }

  /** Which values are accepted, in words, for the documentation and for error messages. */
  public String validValues() {
    return validValues;
  }

  /** Parses and validates {@code raw}; {@code null} gives the default. */
  public T parse(String raw) {
    if (raw == null) {
      return defaultValue;
    }
    T value;
    try {
      value = parser.apply(raw.trim());
    } catch (RuntimeException e) {
      throw invalid(raw, e);
    }
    if (!validator.test(value)) {
      throw invalid(raw, null);
    }
    return value;
  }

  private IllegalArgumentException invalid(String raw, Throwable cause) {
    return new IllegalArgumentException(
        "Invalid value '" + raw + "' for " + key + ": expected " + validValues, cause);
  }

}
