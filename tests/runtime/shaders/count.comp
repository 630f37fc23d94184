#version 450
// counts[i] += 1 for every logical invocation i: proves each one ran exactly once
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Counts { uint counts[]; };
layout(push_constant) uniform Args {
    uint grid0, grid1, grid2;
    uint base0, base1, base2;
};

void main() {
    uint i = gl_GlobalInvocationID.x + base0;
    if (i >= grid0) return;
    atomicAdd(counts[i], 1u);
}
