#version 460
// First step of one radix pass (reduce-then-scan: no workgroup waits on another, so it runs on
// devices without forward progress between workgroups, such as lavapipe): each block's digit
// counts, digit-major (counts[digit * numBlocks + block]).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = RADIX_THREADS) in;

layout(push_constant) uniform Params {
  uint64_t keys;
  uint64_t counts;
  uint n;
  uint shift;
  uint numBlocks;
} pc;

// The tile of the scatter that reads these counts: radix_rank.comp's with -DRANK.
#ifdef RANK
const uint ITEMS = RADIX_RANK_ITEMS;
#else
const uint ITEMS = RADIX_ITEMS;
#endif
const uint TILE = RADIX_THREADS * ITEMS;
const uint DIGITS = RADIX_DIGITS;

shared uint digitCounts[DIGITS];

void main() {
  const uint block = linearGroup();
  if (block >= pc.numBlocks) return;
  const uint t = gl_LocalInvocationIndex;
  if (t < DIGITS) digitCounts[t] = 0;
  barrier();
  Keys keys = Keys(pc.keys);
  const uint base = block * TILE;
  // All of a thread's loads are issued before its first count: they overlap in flight.
  KEY k[ITEMS];
  [[unroll]] for (uint j = 0; j < ITEMS; ++j) {
    const uint i = base + j * RADIX_THREADS + t;
    k[j] = i < pc.n ? keys.v[i] : 0;
  }
  [[unroll]] for (uint j = 0; j < ITEMS; ++j) {
    if (base + j * RADIX_THREADS + t < pc.n) {
      atomicAdd(digitCounts[uint(k[j] >> pc.shift) & (DIGITS - 1)], 1u);
    }
  }
  barrier();
  if (t < DIGITS) U32s(pc.counts).v[t * pc.numBlocks + block] = digitCounts[t];
}
