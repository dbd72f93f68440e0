#version 460
// VulkanContextTest's shader: data[i] += constant for i < n, reached through a buffer device
// address. A dispatch of more groups than maxComputeWorkGroupCount[0] comes split over y, so the
// linear group id is rebuilt from x and y and the groups past the linear count return.
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require

layout(local_size_x = 256) in;

layout(buffer_reference, std430, buffer_reference_align = 4) buffer Words {
  uint values[];
};

layout(push_constant, std430) uniform Push {
  uint64_t data;  // device address of n uints
  uint n;
  uint constant;
  uint groups;    // the linear workgroup count
} push;

void main() {
  uint group = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
  if (group >= push.groups) {
    return;
  }
  uint i = group * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
  if (i < push.n) {
    Words data = Words(push.data);
    data.values[i] += push.constant;
  }
}
