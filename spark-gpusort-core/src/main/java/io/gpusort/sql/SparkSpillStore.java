package io.gpusort.sql;

import io.gpusort.spill.SpillFile;
import io.gpusort.spill.SpillStore;
import java.io.File;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import org.apache.spark.SparkEnv;
import org.apache.spark.serializer.SerializerManager;
import org.apache.spark.storage.DiskBlockManager;
import org.apache.spark.storage.TempLocalBlockId;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.Tuple2;

/**
 * Spill files where Spark puts its own: temporary local blocks of the executor's
 * {@link DiskBlockManager} (under {@code spark.local.dir}), written through the executor's
 * {@link SerializerManager}, so that they are compressed with Spark's codec when
 * {@code spark.shuffle.spill.compress} is on and encrypted when {@code spark.io.encryption.enabled}
 * is, exactly as Spark's sorter writes its spills.
 */
final class SparkSpillStore implements SpillStore {
  private static final Logger LOG = LoggerFactory.getLogger(SparkSpillStore.class);

  private final DiskBlockManager disks;
  private final SerializerManager serializers;

  private SparkSpillStore(DiskBlockManager disks, SerializerManager serializers) {
    this.disks = disks;
    this.serializers = serializers;
  }

  /** The store of this executor. */
  static SparkSpillStore ofExecutor() {
    SparkEnv env = SparkEnv.get();
    if (env == null) {
      throw new IllegalStateException("GpuSort spills need a running SparkEnv");
    }
    return new SparkSpillStore(env.blockManager().diskBlockManager(), env.serializerManager());
  }

  @Override
  public SpillFile create() throws IOException {
    Tuple2<TempLocalBlockId, File> block = disks.createTempLocalBlock();
    return new LocalBlock(block._1(), block._2());
  }

  /** One temporary local block. */
  private final class LocalBlock implements SpillFile {
    private final TempLocalBlockId id;
    private final File file;

    LocalBlock(TempLocalBlockId id, File file) {
      this.id = id;
      this.file = file;
    }

    @Override
    public OutputStream openForWrite() throws IOException {
      FileOutputStream out = new FileOutputStream(file);
      try {
        return serializers.wrapStream(id, out);
      } catch (RuntimeException e) {
        out.close();
        throw e;
      }
    }

    @Override
    public InputStream openForRead() throws IOException {
      FileInputStream in = new FileInputStream(file);
      try {
        return serializers.wrapStream(id, in);
      } catch (RuntimeException e) {
        in.close();
        throw e;
      }
    }

    @Override
    public long sizeOnDiskBytes() {
      return file.length();
    }

    @Override
    public void delete() {
      if (file.exists() && !file.delete()) {
        LOG.warn("Could not delete the spill file {}", file);
      }
    }

    @Override
    public String toString() {
      return file.toString();
    }
  }
}
