// Exclusive prefix sums over the 256 invocations of a workgroup, in shared memory only (no
// subgroup operations: correct for any subgroup size and any mapping of invocations to
// subgroups). Every invocation must call them (they contain barriers). Raking: 16 invocations
// scan 16 values each, then each invocation adds the partial sums of the rows before its own.
#ifndef GPUSORT_SCAN_GLSL
#define GPUSORT_SCAN_GLSL

shared uint scanValues[256];
shared uint scanRows[16];

// Exclusive prefix of x over invocations in gl_LocalInvocationIndex order; total gets the sum of
// all 256. Leaves scanValues free for the caller after its closing barrier.
uint workgroupExclusiveSum(uint x, out uint total) {
  const uint t = gl_LocalInvocationIndex;
  scanValues[t] = x;
  barrier();
  if (t < 16) {
    uint s = 0;
    [[unroll]] for (uint i = 0; i < 16; ++i) {
      const uint v = scanValues[16 * t + i];
      scanValues[16 * t + i] = s;
      s += v;
    }
    scanRows[t] = s;
  }
  barrier();
  uint prefix = scanValues[t];
  uint sum = 0;
  [[unroll]] for (uint r = 0; r < 16; ++r) {
    const uint v = scanRows[r];
    prefix += r < t / 16 ? v : 0u;
    sum += v;
  }
  total = sum;
  barrier();
  return prefix;
}

shared uvec2 scanValues2[256];
shared uvec2 scanRows2[16];

// The same for two words of packed counters (added as plain integers: the caller keeps each
// packed field from overflowing).
uvec2 workgroupExclusiveSum2(uvec2 x, out uvec2 total) {
  const uint t = gl_LocalInvocationIndex;
  scanValues2[t] = x;
  barrier();
  if (t < 16) {
    uvec2 s = uvec2(0);
    [[unroll]] for (uint i = 0; i < 16; ++i) {
      const uvec2 v = scanValues2[16 * t + i];
      scanValues2[16 * t + i] = s;
      s += v;
    }
    scanRows2[t] = s;
  }
  barrier();
  uvec2 prefix = scanValues2[t];
  uvec2 sum = uvec2(0);
  [[unroll]] for (uint r = 0; r < 16; ++r) {
    const uvec2 v = scanRows2[r];
    prefix += r < t / 16 ? v : uvec2(0);
    sum += v;
  }
  total = sum;
  barrier();
  return prefix;
}

#endif
