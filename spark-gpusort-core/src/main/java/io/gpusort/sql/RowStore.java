package io.gpusort.sql;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.unsafe.Platform;
import org.apache.spark.unsafe.memory.MemoryBlock;

/**
 * The rows of one run, copied as {@link UnsafeRow} bytes into blocks of the task's memory (as
 * Spark's sorter holds them: no object per row). Each record is the row's size in 8 bytes, then
 * its bytes; a row is named by a pointer, its block's index in the upper 24 bits and its offset
 * in the lower 40, and read back by pointing a reused {@code UnsafeRow} at it.
 */
final class RowStore {
  /** Bytes before a row's bytes in its block: the size, padded so that rows stay 8-aligned. */
  static final int RECORD_HEADER_BYTES = 8;
  private static final int OFFSET_BITS = 40;
  private static final long OFFSET_MASK = (1L << OFFSET_BITS) - 1;

  private final SortMemory memory;
  private final long blockBytes;
  private final List<MemoryBlock> blocks = new ArrayList<>();
  private MemoryBlock current;
  private long used;
  private long heldBytes;
  private long dataBytes;

  /** Rows go into blocks of {@code blockBytes}, or of one record when a row is larger. */
  RowStore(SortMemory memory, long blockBytes) {
    this.memory = memory;
    this.blockBytes = blockBytes;
  }

  static long recordBytes(int rowSize) {
    return RECORD_HEADER_BYTES + rowSize;
  }

  /** Makes room for a row of {@code rowSize} bytes; false when the memory was refused. */
  boolean tryMakeRoom(int rowSize) {
    long needed = recordBytes(rowSize);
    if (current != null && current.size() - used >= needed) {
      return true;
    }
    MemoryBlock block = memory.tryAllocate(Math.max(blockBytes, needed));
    if (block == null) {
      return false;
    }
    if (blocks.size() >= 1 << (64 - OFFSET_BITS - 1)) {
      memory.free(block);
      throw new IllegalStateException("a run of " + blocks.size() + " blocks is full");
    }
    blocks.add(block);
    current = block;
    used = 0;
    heldBytes += block.size();
    return true;
  }

  /** Copies {@code row} into the current block (after {@link #tryMakeRoom}); returns its pointer. */
  long append(UnsafeRow row) {
    int size = row.getSizeInBytes();
    long at = current.getBaseOffset() + used;
    Platform.putLong(current.getBaseObject(), at, size);
    Platform.copyMemory(row.getBaseObject(), row.getBaseOffset(), current.getBaseObject(),
        at + RECORD_HEADER_BYTES, size);
    long pointer = ((long) (blocks.size() - 1) << OFFSET_BITS) | used;
    used += recordBytes(size);
    dataBytes += recordBytes(size);
    return pointer;
  }

  /** Points {@code target} at the row of {@code pointer}; valid while its block is held. */
  void pointTo(UnsafeRow target, long pointer) {
    MemoryBlock block = blocks.get(blockIndex(pointer));
    long at = block.getBaseOffset() + (pointer & OFFSET_MASK);
    int size = (int) Platform.getLong(block.getBaseObject(), at);
    target.pointTo(block.getBaseObject(), at + RECORD_HEADER_BYTES, size);
  }

  /** As {@link #pointTo(UnsafeRow, long)}, with the row's size already known. */
  void pointTo(UnsafeRow target, long pointer, int size) {
    MemoryBlock block = blocks.get(blockIndex(pointer));
    target.pointTo(block.getBaseObject(),
        block.getBaseOffset() + (pointer & OFFSET_MASK) + RECORD_HEADER_BYTES, size);
  }

  Object base(long pointer) {
    return blocks.get(blockIndex(pointer)).getBaseObject();
  }

  /** The address (with {@link #base}) of the row's bytes. */
  long offset(long pointer) {
    return blocks.get(blockIndex(pointer)).getBaseOffset() + (pointer & OFFSET_MASK)
        + RECORD_HEADER_BYTES;
  }

  int size(long pointer) {
    MemoryBlock block = blocks.get(blockIndex(pointer));
    return (int) Platform.getLong(block.getBaseObject(),
        block.getBaseOffset() + (pointer & OFFSET_MASK));
  }

  static int blockIndex(long pointer) {
    return (int) (pointer >>> OFFSET_BITS);
  }

  /** Bytes of the records appended (rows and their headers). */
  long dataBytes() {
    return dataBytes;
  }

  /** Bytes of blocks held. */
  long heldBytes() {
    return heldBytes;
  }

  /**
   * Frees every block but block {@code keep} (none when negative), which is returned, still
   * counted: the caller frees it with {@link SortMemory#free} once no row points into it.
   */
  MemoryBlock freeAllBut(int keep) {
    MemoryBlock kept = null;
    for (int i = 0; i < blocks.size(); i++) {
      MemoryBlock block = blocks.get(i);
      if (i == keep) {
        kept = block;
      } else {
        memory.free(block);
      }
    }
    blocks.clear();
    current = null;
    used = 0;
    heldBytes = 0;
    dataBytes = 0;
    return kept;
  }
}
