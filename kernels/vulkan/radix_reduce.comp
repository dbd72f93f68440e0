#version 460
// Second step of one radix pass: each digit value's sum over a chunk of RADIX_THREADS *
// RADIX_SCAN_ITEMS blocks, chunkSums[digit * numChunks + chunk], for the scan. Workgroup index:
// digit * numChunks + chunk.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "scan.glsl"

layout(local_size_x = RADIX_THREADS) in;

layout(push_constant) uniform Params {
  uint64_t counts;
  uint64_t chunkSums;
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
  U32s counts = U32s(pc.counts);
  const uint first = chunk * CHUNK + t * RADIX_SCAN_ITEMS;
  uint sum = 0;
  [[unroll]] for (uint j = 0; j < RADIX_SCAN_ITEMS; ++j) {
    const uint b = first + j;
    sum += b < pc.numBlocks ? counts.v[digit * pc.numBlocks + b] : 0u;
  }
  uint total;
  workgroupExclusiveSum(sum, total);
  if (t == 0) U32s(pc.chunkSums).v[group] = total;
}
