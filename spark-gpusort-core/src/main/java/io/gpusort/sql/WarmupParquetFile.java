package io.gpusort.sql;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.parquet.example.data.Group;
import org.apache.parquet.example.data.simple.SimpleGroupFactory;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.hadoop.example.ExampleParquetWriter;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.io.api.Binary;
import org.apache.parquet.schema.LogicalTypeAnnotation;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName;
import org.apache.parquet.schema.Type;
import org.apache.parquet.schema.Types;
import org.apache.spark.sql.execution.datasources.parquet.VectorizedParquetRecordReader;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * A small Parquet file of the row path's warm-up rows, read back by Spark's vectorized Parquet
 * reader as a task's scan of Parquet files reads them (batches of 4096 rows in reused vectors).
 * A first query over Parquet files otherwise pays for the reader's first use inside its tasks: on
 * the H200 host, GpuSort's first sort of 1e8 Parquet rows took 19.3 task-s of input against 7.9
 * in later runs, 2.22 s against 1.00 s in all, and 1.51 s when Spark's own sort had read the files
 * first in that JVM. Written as Spark writes Parquet by default (format version 1, dictionary
 * pages, Snappy), in a directory of its own under {@code java.io.tmpdir}, deleted on {@link
 * #close}.
 */
final class WarmupParquetFile implements AutoCloseable {
  /** Rows of each batch the reader returns (Spark's default). */
  static final int BATCH_ROWS = 4096;

  private final Path dir;
  private final Path file;
  /** Readers not yet read to the end, closed with the file. */
  private final List<VectorizedParquetRecordReader> open = new ArrayList<>();

  private WarmupParquetFile(Path dir, Path file) {
    this.dir = dir;
    this.file = file;
  }

  /**
   * Writes the rows of {@code batches} (columns of long or string type only) to a new file.
   *
   * @throws IOException where the file cannot be written; nothing is left behind then
   */
  static WarmupParquetFile write(StructType schema, List<ColumnarBatch> batches)
      throws IOException {
    Path dir = Files.createTempDirectory("gpusort-warmup-parquet");
    Path file = dir.resolve("part-0.parquet");
    WarmupParquetFile written = new WarmupParquetFile(dir, file);
    MessageType parquetSchema = parquetSchema(schema);
    SimpleGroupFactory groups = new SimpleGroupFactory(parquetSchema);
    try (ParquetWriter<Group> writer = ExampleParquetWriter
        .builder(new org.apache.hadoop.fs.Path(file.toUri()))
        .withConf(new Configuration(false))
        .withType(parquetSchema)
        .withCompressionCodec(CompressionCodecName.SNAPPY)
        .withDictionaryEncoding(true)
        .build()) {
      for (ColumnarBatch batch : batches) {
        for (int r = 0; r < batch.numRows(); r++) {
          Group group = groups.newGroup();
          for (int c = 0; c < schema.size(); c++) {
            ColumnVector column = batch.column(c);
            if (column.isNullAt(r)) {
              continue;
            }
            String name = schema.fields()[c].name();
            if (column.dataType() == DataTypes.StringType) {
              group.append(name, Binary.fromConstantByteArray(column.getBinary(r)));
            } else {
              group.append(name, column.getLong(r));
            }
          }
          writer.write(group);
        }
      }
    } catch (IOException | RuntimeException e) {
      written.close();
      throw e;
    }
    return written;
  }

  private static MessageType parquetSchema(StructType schema) {
    Types.MessageTypeBuilder message = Types.buildMessage();
    for (StructField field : schema.fields()) {
      Type.Repetition repetition =
          field.nullable() ? Type.Repetition.OPTIONAL : Type.Repetition.REQUIRED;
      DataType type = field.dataType();
      if (type == DataTypes.LongType) {
        message.addField(Types.primitive(PrimitiveTypeName.INT64, repetition)
            .named(field.name()));
      } else if (type == DataTypes.StringType) {
        message.addField(Types.primitive(PrimitiveTypeName.BINARY, repetition)
            .as(LogicalTypeAnnotation.stringType()).named(field.name()));
      } else {
        throw new IllegalArgumentException("the warm-up writes long and string columns, not "
            + type.simpleString());
      }
    }
    return message.named("spark_schema");
  }

  /**
   * The file's rows as Spark's vectorized reader returns them: one batch, filled again by each
   * {@code next()}, valid until the next; the reader is closed once the last is read.
   */
  Iterator<ColumnarBatch> batches() throws IOException {
    VectorizedParquetRecordReader reader = new VectorizedParquetRecordReader(false, BATCH_ROWS);
    open.add(reader);
    reader.initialize(file.toString(), null);
    ColumnarBatch batch = reader.resultBatch();
    return new Iterator<>() {
      private boolean ready;
      private boolean done;

      @Override
      public boolean hasNext() {
        if (!ready && !done) {
          try {
            ready = reader.nextBatch();
            if (!ready) {
              done = true;
              open.remove(reader);
              reader.close();
            }
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        }
        return ready;
      }

      @Override
      public ColumnarBatch next() {
        if (!hasNext()) {
          throw new NoSuchElementException();
        }
        ready = false;
        return batch;
      }
    };
  }

  /** The directory the file is in (for tests). */
  Path directory() {
    return dir;
  }

  /** Closes the readers still open, deletes the file and its directory; idempotent. */
  @Override
  public void close() {
    for (VectorizedParquetRecordReader reader : open) {
      try {
        reader.close();
      } catch (IOException | RuntimeException e) {
        // Its file is deleted next: nothing more to give back.
      }
    }
    open.clear();
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(dir)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
