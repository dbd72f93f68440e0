#version 460
// Upfront histogram of every digit of the keys (KEY_BITS / RADIX_BITS digit positions), in one
// read of the input: hist[position * RADIX_DIGITS + digit] += count. The host reads it
// to skip the passes whose digit is the same for every key, and the scan takes each pass's digit
// totals from it (counts do not depend on the order of the keys).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = RADIX_THREADS) in;

layout(push_constant) uniform Params {
  uint64_t keys;
  uint64_t hist;  // positions * RADIX_DIGITS uints, zeroed by the host
  uint n;
  uint groups;
} pc;

const uint POSITIONS = KEY_BITS / RADIX_BITS;
const uint DIGITS = RADIX_DIGITS;
const uint TILE = RADIX_THREADS * RADIX_HIST_ITEMS;

shared uint counts[POSITIONS * DIGITS];

void main() {
  const uint group = linearGroup();
  if (group >= pc.groups) return;
  const uint t = gl_LocalInvocationIndex;
  for (uint i = t; i < POSITIONS * DIGITS; i += RADIX_THREADS) counts[i] = 0;
  barrier();
  Keys keys = Keys(pc.keys);
  const uint base = group * TILE;
  [[unroll]] for (uint j = 0; j < RADIX_HIST_ITEMS; ++j) {
    const uint i = base + j * RADIX_THREADS + t;
    if (i < pc.n) {
      const KEY k = keys.v[i];
      [[unroll]] for (uint p = 0; p < POSITIONS; ++p) atomicAdd(counts[p * DIGITS + (uint(k >> (RADIX_BITS * p)) & (DIGITS - 1))], 1u);
    }
  }
  barrier();
  U32s hist = U32s(pc.hist);
  for (uint i = t; i < POSITIONS * DIGITS; i += RADIX_THREADS) {
    const uint c = counts[i];
    if (c != 0) atomicAdd(hist.v[i], c);
  }
}
