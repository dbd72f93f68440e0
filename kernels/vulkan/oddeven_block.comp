#version 460
// Block sort of the odd-even hybrid: each tile of ODDEVEN_THREADS * ODDEVEN_ITEMS keys is sorted
// in shared memory by Batcher's odd-even merge sort, one barrier a stage. Items are (key,
// position in the tile) compared as a pair, so the network (not stable itself) yields the stable
// order; slots past n get the largest key and sort last. Each value is then read by position
// (valsIn[tile start + position], or the position itself), so the result is stable whatever the
// values are.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = ODDEVEN_THREADS) in;

layout(push_constant) uniform Params {
  uint64_t keysIn;
  uint64_t valsIn;
  uint64_t keysOut;
  uint64_t valsOut;
  uint n;
  uint valsMode;  // VALS_IOTA or VALS_READ
  uint groups;
} pc;

const uint THREADS = ODDEVEN_THREADS;
const uint ITEMS = ODDEVEN_ITEMS;
const uint TILE = THREADS * ITEMS;

#ifdef KEY64
shared uint64_t tileKeys[TILE];
shared uint tilePos[TILE];
bool less(uint a, uint b) {
  const uint64_t ka = tileKeys[a], kb = tileKeys[b];
  return ka < kb || (ka == kb && tilePos[a] < tilePos[b]);
}
void exchange(uint a, uint b) {
  const uint64_t k = tileKeys[a];
  tileKeys[a] = tileKeys[b];
  tileKeys[b] = k;
  const uint p = tilePos[a];
  tilePos[a] = tilePos[b];
  tilePos[b] = p;
}
void put(uint i, uint64_t key, uint pos) { tileKeys[i] = key; tilePos[i] = pos; }
uint64_t keyAt(uint i) { return tileKeys[i]; }
uint posAt(uint i) { return tilePos[i]; }
#else
// Key in the high half, position in the low half: one 64-bit compare orders both.
shared uint64_t tileItems[TILE];
bool less(uint a, uint b) { return tileItems[a] < tileItems[b]; }
void exchange(uint a, uint b) {
  const uint64_t e = tileItems[a];
  tileItems[a] = tileItems[b];
  tileItems[b] = e;
}
void put(uint i, uint key, uint pos) { tileItems[i] = (uint64_t(key) << 32) | pos; }
uint keyAt(uint i) { return uint(tileItems[i] >> 32); }
uint posAt(uint i) { return uint(tileItems[i]); }
#endif

// Whether stage (p, k) of Batcher's network (p the length of the sorted runs being merged, k =
// p, p/2, ..., 1) has comparator (x, x + k): (x - k mod p) mod 2k < k, within one block of 2p.
bool comparator(uint p, uint k, uint x) {
  const uint r = k % p;
  return x + k < TILE && x >= r && (x - r) % (2 * k) < k && x / (2 * p) == (x + k) / (2 * p);
}

void main() {
  const uint tile = linearGroup();
  if (tile >= pc.groups) return;
  const uint t = gl_LocalInvocationIndex;
  const uint base = tile * TILE;
  const uint count = min(TILE, pc.n - base);
  Keys keysIn = Keys(pc.keysIn);
  [[unroll]] for (uint j = 0; j < ITEMS; ++j) {
    const uint i = j * THREADS + t;
    put(i, i < count ? keysIn.v[base + i] : KEY_MAX, i);
  }
  barrier();
  for (uint p = 1; p < TILE; p <<= 1) {
    for (uint k = p; k >= 1; k >>= 1) {
      [[unroll]] for (uint j = 0; j < ITEMS; ++j) {
        const uint x = j * THREADS + t;
        if (comparator(p, k, x) && less(x + k, x)) exchange(x, x + k);
      }
      barrier();
    }
  }
  Keys keysOut = Keys(pc.keysOut);
  U32s valsIn = U32s(pc.valsIn);
  U32s valsOut = U32s(pc.valsOut);
  [[unroll]] for (uint j = 0; j < ITEMS; ++j) {
    const uint i = j * THREADS + t;
    if (i < count) {
      const uint from = base + posAt(i);
      keysOut.v[base + i] = keyAt(i);
      valsOut.v[base + i] = pc.valsMode == VALS_IOTA ? from : valsIn.v[from];
    }
  }
}
