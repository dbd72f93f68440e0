#version 460
// One merge pass of the odd-even hybrid: runs A = [b, b + run) and B = [b + run, b + 2 run)
// (clipped to n), for b = 0, 2 run, ..., merge into [b, b + 2 run); equal keys take A's items
// first (stable). A workgroup makes output tile [w TILE, (w + 1) TILE), inside one pair since
// TILE divides 2 run: two invocations find the tile's merge-path splits in global memory, the
// workgroup loads the tile's A and B parts into shared memory, each invocation merges ITEMS
// outputs from its own diagonal, and the tile is written out in order.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = ODDEVEN_THREADS) in;

layout(push_constant) uniform Params {
  uint64_t keysIn;
  uint64_t valsIn;
  uint64_t keysOut;
  uint64_t valsOut;
  uint n;
  uint run;
  uint groups;
} pc;

const uint THREADS = ODDEVEN_THREADS;
const uint ITEMS = ODDEVEN_ITEMS;
const uint TILE = THREADS * ITEMS;

shared KEY tileKeys[TILE];
shared uint tileVals[TILE];
shared uint splitAt[2];

// Merge-path split of diagonal d of A = keys[aStart, aStart + aLen) and B = keys[bStart, ...):
// the number of A items among the first d outputs, ties to A.
uint globalSplit(Keys keys, uint aStart, uint aLen, uint bStart, uint bLen, uint d) {
  uint lo = d > bLen ? d - bLen : 0u;
  uint hi = min(d, aLen);
  while (lo < hi) {
    const uint mid = (lo + hi) >> 1;
    if (keys.v[aStart + mid] <= keys.v[bStart + d - 1 - mid]) lo = mid + 1; else hi = mid;
  }
  return lo;
}

uint localSplit(uint aLen, uint bLen, uint d) {
  uint lo = d > bLen ? d - bLen : 0u;
  uint hi = min(d, aLen);
  while (lo < hi) {
    const uint mid = (lo + hi) >> 1;
    if (tileKeys[mid] <= tileKeys[aLen + d - 1 - mid]) lo = mid + 1; else hi = mid;
  }
  return lo;
}

void main() {
  const uint tile = linearGroup();
  if (tile >= pc.groups) return;
  const uint t = gl_LocalInvocationIndex;
  const uint outStart = tile * TILE;
  const uint aStart = outStart & ~(2 * pc.run - 1);
  const uint aLen = min(pc.run, pc.n - aStart);
  const uint bStart = aStart + aLen;
  const uint bLen = bStart >= pc.n ? 0u : min(pc.run, pc.n - bStart);
  const uint d0 = outStart - aStart;
  const uint d1 = min(d0 + TILE, aLen + bLen);
  const uint total = d1 - d0;
  Keys keysIn = Keys(pc.keysIn);
  if (t < 2) splitAt[t] = globalSplit(keysIn, aStart, aLen, bStart, bLen, t == 0 ? d0 : d1);
  barrier();
  const uint a0 = splitAt[0];
  const uint aCount = splitAt[1] - a0;
  const uint b0 = d0 - a0;
  U32s valsIn = U32s(pc.valsIn);
  [[unroll]] for (uint j = 0; j < ITEMS; ++j) {
    const uint i = j * THREADS + t;
    if (i < total) {
      const uint from = i < aCount ? aStart + a0 + i : bStart + b0 + (i - aCount);
      tileKeys[i] = keysIn.v[from];
      tileVals[i] = valsIn.v[from];
    }
  }
  barrier();
  const uint bCount = total - aCount;
  const uint d = min(t * ITEMS, total);
  uint ai = localSplit(aCount, bCount, d);
  uint bi = d - ai;
  KEY outKeys[ITEMS];
  uint outVals[ITEMS];
  [[unroll]] for (uint j = 0; j < ITEMS; ++j) {
    const bool haveA = ai < aCount;
    const bool haveB = bi < bCount;
    const bool takeA = haveA && (!haveB || tileKeys[ai] <= tileKeys[aCount + bi]);
    const uint from = takeA ? ai : aCount + bi;
    outKeys[j] = (haveA || haveB) ? tileKeys[min(from, TILE - 1)] : KEY(0);
    outVals[j] = (haveA || haveB) ? tileVals[min(from, TILE - 1)] : 0u;
    ai += takeA ? 1u : 0u;
    bi += takeA ? 0u : 1u;
  }
  barrier();
  [[unroll]] for (uint j = 0; j < ITEMS; ++j) {
    const uint i = t * ITEMS + j;
    if (i < total) {
      tileKeys[i] = outKeys[j];
      tileVals[i] = outVals[j];
    }
  }
  barrier();
  Keys keysOut = Keys(pc.keysOut);
  U32s valsOut = U32s(pc.valsOut);
  [[unroll]] for (uint j = 0; j < ITEMS; ++j) {
    const uint i = j * THREADS + t;
    if (i < total) {
      keysOut.v[outStart + i] = tileKeys[i];
      valsOut.v[outStart + i] = tileVals[i];
    }
  }
}
