#version 450
// out[y][x] = 1 + x + 65536 * y over a 2-D grid (row length grid0), counting visits in hits
layout(local_size_x = 8, local_size_y = 8) in;
layout(std430, binding = 0) writeonly buffer Out { uint result[]; };
layout(std430, binding = 1) buffer Hits { uint hits[]; };
layout(push_constant) uniform Args {
    uint grid0, grid1, grid2;
    uint base0, base1, base2;
};

void main() {
    uint x = gl_GlobalInvocationID.x + base0;
    uint y = gl_GlobalInvocationID.y + base1;
    if (x >= grid0 || y >= grid1) return;
    result[y * grid0 + x] = 1u + x + 65536u * y;
    atomicAdd(hits[y * grid0 + x], 1u);
}
