#version 460
// Last step of one radix pass (digit of RADIX_BITS bits at `shift`), for devices whose subgroups
// hold 8 to 32 invocations and are full (the pipeline asks for full subgroups): the same result as
// radix_scatter.comp, ranked with subgroup ballots instead of two-bit splits.
//
// Each subgroup takes a contiguous stretch of the tile, item i of its lane l at stretch position
// i * subgroupSize + l, so ranking items in (subgroup, item, lane) order ranks them in input order
// and the pass is stable. Per item, the lanes holding the same digit find each other with one
// ballot per digit bit; the highest of them adds the group's size to the subgroup's counter for
// the digit. The counters then become each subgroup's start within the tile for each digit, keys
// move to shared memory in digit order, and go out in slot order: consecutive invocations write
// consecutive positions of one digit. Values follow through the same shared memory.
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_ballot : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#include "common.glsl"

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
const uint ITEMS = RADIX_RANK_ITEMS;
const uint TILE = THREADS * ITEMS;
const uint DIGITS = RADIX_DIGITS;
// The smallest subgroup the engine runs this shader with, and so the most subgroups a workgroup.
const uint MIN_SUBGROUP = 8;
const uint MAX_SUBGROUPS = THREADS / MIN_SUBGROUP;
// Two 16-bit counters a word: a subgroup's counts, then its starts, fit (TILE <= 65536).
const uint COUNTER_WORDS = MAX_SUBGROUPS * DIGITS / 2;
#define MAX_U(a, b) ((a) > (b) ? (a) : (b))
// The subgroups' digit counters, and after the ranking (reusing the space) one 32-bit word of
// every item in digit order: the keys' words, then the values.
shared uint space[MAX_U(COUNTER_WORDS, TILE)];
shared uint scatterBase[DIGITS];
shared uint subgroupSums[MAX_SUBGROUPS];

// The lanes of the subgroup whose digit equals this lane's: one ballot per digit bit.
uint peersOf(uint digit) {
  uint peers = subgroupBallot(true).x;
  [[unroll]] for (uint bit = 0; bit < RADIX_BITS; ++bit) {
    const bool set = ((digit >> bit) & 1u) != 0;
    const uint voters = subgroupBallot(set).x;
    peers &= set ? voters : ~voters;
  }
  return peers;
}

// Exclusive prefix of x over the workgroup (in subgroup, then lane order); total gets the sum.
uint workgroupExclusiveSumSg(uint x, out uint total) {
  const uint inclusive = subgroupInclusiveAdd(x);
  if (gl_SubgroupInvocationID == gl_SubgroupSize - 1) subgroupSums[gl_SubgroupID] = inclusive;
  barrier();
  uint before = 0;
  uint sum = 0;
  for (uint s = 0; s < gl_NumSubgroups; ++s) {
    const uint v = subgroupSums[s];
    before += s < gl_SubgroupID ? v : 0u;
    sum += v;
  }
  total = sum;
  return before + inclusive - x;
}

uint half16(uint word, uint which) { return (word >> (16u * which)) & 0xFFFFu; }

void main() {
  const uint block = linearGroup();
  if (block >= pc.numBlocks) return;
  const uint t = gl_LocalInvocationIndex;
  const uint sg = gl_SubgroupID;
  const uint lane = gl_SubgroupInvocationID;
  const uint sgSize = gl_SubgroupSize;
  // The invocation's place in (subgroup, lane) order, which the subgroup scans follow; it need
  // not be gl_LocalInvocationIndex.
  const uint me = sg * sgSize + lane;
  const uint base = block * TILE;
  const uint count = min(TILE, pc.n - base);
  const bool withVals = pc.valsMode != VALS_NONE;
  // This lane's first position in the tile; item i is at stretch + i * sgSize.
  const uint stretch = sg * sgSize * ITEMS + lane;

  for (uint w = t; w < gl_NumSubgroups * (DIGITS / 2); w += THREADS) space[w] = 0;
  barrier();

  // Positions past the input get the largest key: the last digit, ranked after every real key.
  Keys keysIn = Keys(pc.keysIn);
  KEY k[ITEMS];
  [[unroll]] for (uint i = 0; i < ITEMS; ++i) {
    const uint p = stretch + i * sgSize;
    k[i] = p < count ? keysIn.v[base + p] : KEY_MAX;
  }

#if RADIX_RANK_EARLY_VALS
  // Values read with the keys: their loads overlap the ranking instead of following it.
  uint vals[ITEMS];
  if (pc.valsMode == VALS_READ) {
    U32s valsIn = U32s(pc.valsIn);
    [[unroll]] for (uint i = 0; i < ITEMS; ++i) {
      const uint p = stretch + i * sgSize;
      vals[i] = p < count ? valsIn.v[base + p] : 0u;
    }
  }
#endif

  // Rank within the subgroup; ranks[i / 2] holds items i and i + 1 (16 bits each).
  const uint lowerLanes = gl_SubgroupLtMask.x;
  const uint counterBase = sg * (DIGITS / 2);
  uint ranks[(ITEMS + 1) / 2];
  [[unroll]] for (uint i = 0; i < ITEMS; ++i) {
    const uint digit = uint(k[i] >> pc.shift) & (DIGITS - 1);
    const uint peers = peersOf(digit);
    const uint leader = uint(findMSB(peers));
    // Every lane reads the count before the group's leader adds the group's size. Leaders of
    // digits d and d ^ 1 share a word: hence the atomic.
    const uint word = counterBase + (digit >> 1);
    const uint before = half16(space[word], digit & 1u) + bitCount(peers & lowerLanes);
    subgroupBarrier();
    if (lane == leader) atomicAdd(space[word], bitCount(peers) << (16u * (digit & 1u)));
    if ((i & 1u) == 0) ranks[i / 2] = before;
    else ranks[i / 2] |= before << 16;
    subgroupBarrier();
  }
  barrier();

  // Invocation me < DIGITS / 2 owns the word of digits 2 * me and 2 * me + 1: subgroup counts
  // become subgroup starts within each digit, and the digits' tile-local starts are scanned.
  uint pairCount = 0;
  uint lowCount = 0;
  if (me < DIGITS / 2) {
    uint running = 0;  // both digits' running starts, packed
    for (uint s = 0; s < gl_NumSubgroups; ++s) {
      const uint c = space[s * (DIGITS / 2) + me];
      space[s * (DIGITS / 2) + me] = running;
      running += c;
    }
    lowCount = running & 0xFFFFu;
    pairCount = lowCount + (running >> 16);
  }
  uint unused;
  const uint pairStart = workgroupExclusiveSumSg(pairCount, unused);
  if (me < DIGITS / 2) {
    const uint packedStart = pairStart | ((pairStart + lowCount) << 16);
    for (uint s = 0; s < gl_NumSubgroups; ++s) space[s * (DIGITS / 2) + me] += packedStart;
    const uint d = 2 * me;
    scatterBase[d] = U32s(pc.offsets).v[d * pc.numBlocks + block] - pairStart;
    scatterBase[d + 1] =
        U32s(pc.offsets).v[(d + 1) * pc.numBlocks + block] - (pairStart + lowCount);
  }
  barrier();

  // Tile-local slots: the subgroup's start for the digit plus the rank within the subgroup.
  [[unroll]] for (uint i = 0; i < ITEMS; ++i) {
    const uint digit = uint(k[i] >> pc.shift) & (DIGITS - 1);
    const uint start = half16(space[counterBase + (digit >> 1)], digit & 1u);
    const uint rank = half16(ranks[i / 2], i & 1u) + start;
    if ((i & 1u) == 0) ranks[i / 2] = (ranks[i / 2] & 0xFFFF0000u) | rank;
    else ranks[i / 2] = (ranks[i / 2] & 0xFFFFu) | (rank << 16);
  }
  barrier();

  // Keys out, one 32-bit word a round, the word that holds the digit first: its round also
  // records each slot's digit (a byte each, four to a word) for the rounds after it.
#ifdef KEY64
  const uint digitWord = pc.shift >> 5;
  const uint WORD_ROUNDS = 2;
#else
  const uint digitWord = 0;
  const uint WORD_ROUNDS = 1;
#endif
  const uint localShift = pc.shift & 31u;
  uint slotDigits[(ITEMS + 3) / 4];
  U32s keysOut = U32s(pc.keysOut);
  [[unroll]] for (uint round = 0; round < WORD_ROUNDS; ++round) {
    const uint word = round == 0 ? digitWord : 1u - digitWord;
    if (round > 0) barrier();
    [[unroll]] for (uint i = 0; i < ITEMS; ++i) {
#ifdef KEY64
      space[half16(ranks[i / 2], i & 1u)] = uint(k[i] >> (32u * word));
#else
      space[half16(ranks[i / 2], i & 1u)] = k[i];
#endif
    }
    barrier();
    [[unroll]] for (uint i = 0; i < ITEMS; ++i) {
      const uint slot = i * THREADS + t;
      const uint value = space[slot];
      if (round == 0) {
        const uint d = (value >> localShift) & (DIGITS - 1);
        if ((i & 3u) == 0) slotDigits[i / 4] = d;
        else slotDigits[i / 4] |= d << (8u * (i & 3u));
      }
      if (slot < count) {
        const uint to = scatterBase[(slotDigits[i / 4] >> (8u * (i & 3u))) & 0xFFu] + slot;
#ifdef KEY64
        keysOut.v[2 * to + word] = value;
#else
        keysOut.v[to] = value;
#endif
      }
    }
  }
  if (!withVals) return;

  barrier();
#if !RADIX_RANK_EARLY_VALS
  U32s valsIn = U32s(pc.valsIn);
#endif
  [[unroll]] for (uint i = 0; i < ITEMS; ++i) {
    const uint p = stretch + i * sgSize;
    uint v = base + p;
#if RADIX_RANK_EARLY_VALS
    if (pc.valsMode == VALS_READ) v = vals[i];
#else
    if (pc.valsMode == VALS_READ) v = p < count ? valsIn.v[base + p] : 0u;
#endif
    space[half16(ranks[i / 2], i & 1u)] = v;
  }
  barrier();
  U32s valsOut = U32s(pc.valsOut);
  [[unroll]] for (uint i = 0; i < ITEMS; ++i) {
    const uint slot = i * THREADS + t;
    if (slot < count) {
      valsOut.v[scatterBase[(slotDigits[i / 4] >> (8u * (i & 3u))) & 0xFFu] + slot] = space[slot];
    }
  }
}
