#version 450
// out = scale * in + shift, arguments in push constants
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer In { float src[]; };
layout(std430, binding = 1) writeonly buffer Out { float dst[]; };
layout(push_constant) uniform Args {
    float scale;
    float shift;
    uint grid0, grid1, grid2;
    uint base0, base1, base2;
};

void main() {
    uint i = gl_GlobalInvocationID.x + base0;
    if (i >= grid0) return;
    precise float r = scale * src[i] + shift;
    dst[i] = r;
}
