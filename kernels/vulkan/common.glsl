// Shared declarations of the compute shaders: buffers are reached through buffer device
// addresses passed in push constants (no descriptor sets), and a dispatch may be split over two
// dimensions when it exceeds the device's workgroup-count limit in x.
#ifndef GPUSORT_COMMON_GLSL
#define GPUSORT_COMMON_GLSL

#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
// [[unroll]]: loops over a thread's items must unroll, or their arrays land in local memory.
#extension GL_EXT_control_flow_attributes : require

#include "tuning.glsl"

layout(buffer_reference, std430, buffer_reference_align = 4) buffer U32s { uint v[]; };
layout(buffer_reference, std430, buffer_reference_align = 8) buffer U64s { uint64_t v[]; };

// The workgroup's index in a one-dimensional grid that the host may have split into x and y.
uint linearGroup() { return gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x; }

// Keys of 32 or 64 bits, chosen at build time (-DKEY64).
#ifdef KEY64
#define KEY uint64_t
#define KEY_MAX 0xFFFFFFFFFFFFFFFFul
#define Keys U64s
#else
#define KEY uint
#define KEY_MAX 0xFFFFFFFFu
#define Keys U32s
#endif

// Digit values of the radix sort, and the bits of a key.
#define RADIX_DIGITS (1u << RADIX_BITS)
#ifdef KEY64
#define KEY_BITS 64u
#else
#define KEY_BITS 32u
#endif

// How a sort gets its values (the row permutation it carries).
#define VALS_NONE 0u   // keys only
#define VALS_IOTA 1u   // value = input position
#define VALS_READ 2u   // read from valsIn

#endif
