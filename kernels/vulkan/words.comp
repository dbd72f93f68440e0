#version 460
// Key-word moves of the engine. EXTRACT: out[i] = high 32 bits of in[i] (keys of at most 32
// significant bits, which sit in the high half of word 0). GATHER: out[i] = in[perm[i]] (a word
// column in the order sorted so far, for the next word's sort).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = WORDS_THREADS) in;

layout(push_constant) uniform Params {
  uint64_t source;  // 64-bit words
  uint64_t target;  // EXTRACT: 32-bit keys; GATHER: 64-bit words
  uint64_t perm;    // GATHER only
  uint n;
  uint groups;
} pc;

void main() {
  const uint group = linearGroup();
  if (group >= pc.groups) return;
  U64s source = U64s(pc.source);
  const uint base = group * WORDS_THREADS * WORDS_ITEMS + gl_LocalInvocationIndex;
  [[unroll]] for (uint j = 0; j < WORDS_ITEMS; ++j) {
    const uint i = base + j * WORDS_THREADS;
    if (i < pc.n) {
#ifdef GATHER
      U64s(pc.target).v[i] = source.v[U32s(pc.perm).v[i]];
#else
      U32s(pc.target).v[i] = uint(source.v[i] >> 32);
#endif
    }
  }
}
