#version 450
// Uses optional features the runtime must enable at device creation: 16-bit floats and 8-bit
// ints in storage buffers, float16 and int64 arithmetic, and float atomic add. With any of them
// off, the validation layer reports the shader module.
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_EXT_shader_atomic_float : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Halves { float16_t halves[]; };
layout(std430, binding = 1) readonly buffer Bytes { int8_t bytes[]; };
layout(std430, binding = 2) writeonly buffer Out { int64_t result[]; };
layout(std430, binding = 3) buffer Total { float total; };
layout(push_constant) uniform Args {
    uint grid0, grid1, grid2;
    uint base0, base1, base2;
};

void main() {
    uint i = gl_GlobalInvocationID.x + base0;
    if (i >= grid0) return;
    float16_t twice = halves[i] * float16_t(2.0);
    result[i] = int64_t(bytes[i]) * 1000000000000l + int64_t(twice);
    atomicAdd(total, float(twice));
}
