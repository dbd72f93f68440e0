package io.gpusort.sql;

/** A sort key no engine can encode; the message names the column and its type. */
public final class UnsupportedKeyException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public UnsupportedKeyException(String message) {
    super(message);
  }
}
