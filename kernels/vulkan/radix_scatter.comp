#version 460
// Last step of one radix pass (digit of RADIX_BITS bits at `shift`): a block of TILE keys (and
// values) is sorted by the digit in shared memory, stably, by RADIX_BITS / 2 splits on two bits
// each (each a workgroup prefix sum of four packed counters); then every key goes to its block's
// first position for its digit (from the scan) plus its rank among the block's keys of that
// digit. The writes leave in tile order, so keys of one digit go out as one contiguous run.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "scan.glsl"

layout(local_size_x = RADIX_THREADS) in;

layout(push_constant) uniform Params {
  uint64_t keysIn;
  uint64_t keysOut;
  uint64_t valsIn;
  uint64_t valsOut;
  uint64_t offsets;  // digit * numBlocks + block: first output position, from the scan
  uint n;
  uint shift;
  uint numBlocks;
  uint valsMode;  // VALS_NONE, VALS_IOTA or VALS_READ
} pc;

const uint THREADS = RADIX_THREADS;
const uint ITEMS = RADIX_ITEMS;
const uint TILE = THREADS * ITEMS;
const uint DIGITS = RADIX_DIGITS;

// One padding slot every 32 keeps a thread's run of ITEMS consecutive slots off its neighbours'
// banks.
shared KEY tileKeys[TILE + TILE / 32];
shared uint tileVals[TILE + TILE / 32];
shared uint digitStart[DIGITS];
shared uint digitOffset[DIGITS];

uint slot(uint i) { return i + (i >> 5); }
uint digitOf(KEY k) { return uint(k >> pc.shift) & (DIGITS - 1); }

// Field b (0..3) of four 16-bit counters packed in two words.
uint field(uvec2 c, uint b) { return ((b < 2 ? c.x : c.y) >> (16 * (b & 1))) & 0xFFFFu; }
uvec2 unit(uint b) { return b < 2 ? uvec2(1u << (16 * b), 0) : uvec2(0, 1u << (16 * (b - 2))); }

void main() {
  const uint block = linearGroup();
  if (block >= pc.numBlocks) return;
  const uint t = gl_LocalInvocationIndex;
  const uint base = block * TILE;
  const uint count = min(TILE, pc.n - base);
  const bool withVals = pc.valsMode != VALS_NONE;

  if (t < DIGITS) {
    digitStart[t] = 0;
    digitOffset[t] = U32s(pc.offsets).v[t * pc.numBlocks + block];
  }
  barrier();

  // Striped, coalesced load; slots past the input get the largest key, which the stable splits
  // keep at the end (they are never written out).
  Keys keysIn = Keys(pc.keysIn);
  U32s valsIn = U32s(pc.valsIn);
  [[unroll]] for (uint j = 0; j < ITEMS; ++j) {
    const uint i = j * THREADS + t;
    const bool real = i < count;
    const KEY k = real ? keysIn.v[base + i] : KEY_MAX;
    uint v = 0;
    if (pc.valsMode == VALS_IOTA) v = base + i;
    else if (pc.valsMode == VALS_READ && real) v = valsIn.v[base + i];
    tileKeys[slot(i)] = k;
    tileVals[slot(i)] = v;
    if (real) atomicAdd(digitStart[digitOf(k)], 1u);
  }
  barrier();

  // Each digit's first position in the sorted tile.
  {
    uint unused;
    const uint c = t < DIGITS ? digitStart[t] : 0u;
    const uint start = workgroupExclusiveSum(c, unused);
    if (t < DIGITS) digitStart[t] = start;
  }

  KEY k[ITEMS];
  uint v[ITEMS];
  [[unroll]] for (uint j = 0; j < ITEMS; ++j) {
    k[j] = tileKeys[slot(t * ITEMS + j)];
    v[j] = tileVals[slot(t * ITEMS + j)];
  }
  [[unroll]] for (uint round = 0; round < RADIX_BITS / 2; ++round) {
    const uint bitShift = pc.shift + 2 * round;
    uvec2 mine = uvec2(0);
    uvec2 before[ITEMS];
    [[unroll]] for (uint j = 0; j < ITEMS; ++j) {
      before[j] = mine;
      mine += unit(uint(k[j] >> bitShift) & 3u);
    }
    uvec2 total;
    // Contains barriers: every thread has read its items before any slot is rewritten below.
    const uvec2 prefix = workgroupExclusiveSum2(mine, total);
    const uint start1 = total.x & 0xFFFFu;
    const uint start2 = start1 + (total.x >> 16);
    const uint start3 = start2 + (total.y & 0xFFFFu);
    [[unroll]] for (uint j = 0; j < ITEMS; ++j) {
      const uint b = uint(k[j] >> bitShift) & 3u;
      const uint start = b == 0 ? 0u : b == 1 ? start1 : b == 2 ? start2 : start3;
      const uint to = start + field(prefix + before[j], b);
      tileKeys[slot(to)] = k[j];
      tileVals[slot(to)] = v[j];
    }
    barrier();
    if (round + 1 < RADIX_BITS / 2) {
      [[unroll]] for (uint j = 0; j < ITEMS; ++j) {
        k[j] = tileKeys[slot(t * ITEMS + j)];
        v[j] = tileVals[slot(t * ITEMS + j)];
      }
    }
  }

  Keys keysOut = Keys(pc.keysOut);
  U32s valsOut = U32s(pc.valsOut);
  [[unroll]] for (uint j = 0; j < ITEMS; ++j) {
    const uint i = j * THREADS + t;
    if (i < count) {
      const KEY key = tileKeys[slot(i)];
      const uint d = digitOf(key);
      const uint to = digitOffset[d] + i - digitStart[d];
      keysOut.v[to] = key;
      if (withVals) valsOut.v[to] = tileVals[slot(i)];
    }
  }
}
