package io.gpusort.examples;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.read.SupportsPushDownRequiredColumns;
import org.apache.spark.sql.sources.DataSourceRegister;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * A Spark read source for TeraSort files (format {@code "terasort"} or this class's name): the
 * records of one path as the columns {@code key} and {@code value} of {@link TeraRecords#SCHEMA},
 * read in batches of byte slices ({@link TeraScan}). The files are those {@link TeraInputFormat}
 * lists (a file, a directory's files in name order skipping {@code _} and {@code .} names, a
 * glob's matches), listed once when the DataFrame is loaded; a file that is not a whole number of
 * 100-byte records fails the load, with {@link TeraInputFormat#partialRecordError}'s message, as
 * does a path that matches nothing (both as an {@link UncheckedIOException}). Hadoop settings
 * are the session's, with the read's options laid over them (as Spark's file sources do).
 *
 * <pre>{@code
 * Dataset<Row> records = spark.read().format("terasort").load("hdfs:///terasort/in");
 * }</pre>
 */
public final class TeraSortSource implements TableProvider, DataSourceRegister {
  /** The short name for {@code spark.read().format(...)}. */
  public static final String SHORT_NAME = "terasort";

  @Override
  public String shortName() {
    return SHORT_NAME;
  }

  @Override
  public StructType inferSchema(CaseInsensitiveStringMap options) {
    return TeraRecords.SCHEMA;
  }

  @Override
  public Table getTable(StructType schema, Transform[] partitioning,
      Map<String, String> properties) {
    CaseInsensitiveStringMap options = new CaseInsensitiveStringMap(properties);
    if (options.containsKey("paths") || !options.containsKey("path")) {
      throw new IllegalArgumentException("the terasort source reads one path (a file, a "
          + "directory or a glob): load(path)");
    }
    SparkSession spark = SparkSession.active();
    Configuration conf = spark.sessionState().newHadoopConf();
    properties.forEach((key, value) -> {
      if (value != null && !key.equals("path")) {
        conf.set(key, value);
      }
    });
    Path input = new Path(options.get("path"));
    try {
      List<FileStatus> files = TeraInputFormat.inputFiles(conf, input);
      String partial = TeraInputFormat.partialRecordError(files);
      if (partial != null) {
        throw new IOException(partial);
      }
      return new TeraTable(spark, input, files, conf);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The files of one load: read as a whole or column-pruned, never written. */
  private static final class TeraTable implements SupportsRead {
    private final SparkSession spark;
    private final Path input;
    private final List<FileStatus> files;
    private final Configuration conf;

    TeraTable(SparkSession spark, Path input, List<FileStatus> files, Configuration conf) {
      this.spark = spark;
      this.input = input;
      this.files = List.copyOf(files);
      this.conf = conf;
    }

    @Override
    public String name() {
      return "terasort " + input;
    }

    @Override
    @SuppressWarnings("deprecation") // deprecated for columns(), yet still abstract
    public StructType schema() {
      return TeraRecords.SCHEMA;
    }

    @Override
    public Set<TableCapability> capabilities() {
      return Set.of(TableCapability.BATCH_READ);
    }

    @Override
    public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
      return new PrunedScanBuilder();
    }

    /** The columns the query reads, of the two; the split size as the session says now. */
    private final class PrunedScanBuilder implements ScanBuilder,
        SupportsPushDownRequiredColumns {
      private StructType readSchema = TeraRecords.SCHEMA;

      @Override
      public void pruneColumns(StructType requiredSchema) {
        Set<String> required = Set.of(requiredSchema.fieldNames());
        StructType pruned = new StructType();
        for (StructField field : TeraRecords.SCHEMA.fields()) {
          if (required.contains(field.name())) {
            pruned = pruned.add(field);
          }
        }
        readSchema = pruned;
      }

      @Override
      public Scan build() {
        return new TeraScan(spark, input, files, conf, readSchema,
            spark.sessionState().conf().filesMaxPartitionBytes());
      }
    }
  }
}
