#version 450
// out = a * x + y over a 1-D grid; `precise` keeps a*x+y unfused, so results equal numpy's
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer Y { float y[]; };
layout(std430, binding = 2) writeonly buffer Out { float result[]; };
layout(push_constant) uniform Args {
    float a;
    uint grid0, grid1, grid2;
    uint base0, base1, base2;
};

void main() {
    uint i = gl_GlobalInvocationID.x + base0;
    if (i >= grid0) return;
    precise float r = a * x[i] + y[i];
    result[i] = r;
}
