#version 460
// Scan step of one radix pass: turns the block counts of one digit and one chunk of blocks into
// each block's first output position for that digit (in place, counts[digit * numBlocks +
// block]). The position before the chunk is the sum of the smaller digits' totals (from the
// upfront histogram) and of this digit's earlier chunks (chunkSums), so every workgroup works
// alone. Workgroup index: digit * numChunks + chunk.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "scan.glsl"

layout(local_size_x = RADIX_THREADS) in;

layout(push_constant) uniform Params {
  uint64_t counts;
  uint64_t chunkSums;
  uint64_t digitTotals;  // RADIX_DIGITS uints: this pass's position of the upfront histogram
  uint numBlocks;
  uint numChunks;
  uint groups;
} pc;

const uint CHUNK = RADIX_THREADS * RADIX_SCAN_ITEMS;

void main() {
  const uint group = linearGroup();
  if (group >= pc.groups) return;
  const uint digit = group / pc.numChunks;
  const uint chunk = group % pc.numChunks;
  const uint t = gl_LocalInvocationIndex;

  U32s sums = U32s(pc.chunkSums);
  uint before = t < digit ? U32s(pc.digitTotals).v[t] : 0u;  // digit < RADIX_DIGITS <= 256
  for (uint c = t; c < chunk; c += RADIX_THREADS) before += sums.v[digit * pc.numChunks + c];
  uint start;
  workgroupExclusiveSum(before, start);

  U32s counts = U32s(pc.counts);
  const uint first = chunk * CHUNK + t * RADIX_SCAN_ITEMS;
  uint local[RADIX_SCAN_ITEMS];
  uint sum = 0;
  [[unroll]] for (uint j = 0; j < RADIX_SCAN_ITEMS; ++j) {
    const uint b = first + j;
    local[j] = sum;
    sum += b < pc.numBlocks ? counts.v[digit * pc.numBlocks + b] : 0u;
  }
  uint unused;
  const uint prefix = start + workgroupExclusiveSum(sum, unused);
  [[unroll]] for (uint j = 0; j < RADIX_SCAN_ITEMS; ++j) {
    const uint b = first + j;
    if (b < pc.numBlocks) counts.v[digit * pc.numBlocks + b] = prefix + local[j];
  }
}
